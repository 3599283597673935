import { addressAllowed, hostPattern, urlHost } from '@quarry/runtime';

/**
 * QUARRY_WEBHOOK_ALLOW: which host[:port] a webhook may reach. A pattern with `*` in its host admits
 * public addresses only; a pattern naming a host exactly (`127.0.0.1:8080`, `hooks.internal`) also admits
 * the loopback, link-local or private addresses that host has, because an operator wrote it down.
 */
export interface DestinationMatch {
  allowed: boolean;
  /** A pattern names this host exactly (no `*`): private addresses are then allowed too. */
  explicit: boolean;
}

interface Pattern {
  host: RegExp;
  /** The ports it admits: the one written, else the web's own two (a bare host never means every port). */
  ports: readonly number[];
  exact: boolean;
}

const WEB_PORTS = [80, 443] as const;

export function portOf(url: URL): number {
  return url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
}

export class WebhookPolicy {
  private readonly patterns: Pattern[];

  constructor(patterns: readonly string[]) {
    this.patterns = patterns.map((raw) => {
      const m = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(raw.trim().toLowerCase());
      return { ...hostPattern(m?.[1] ?? raw), ports: m?.[2] ? [Number(m[2])] : WEB_PORTS };
    });
  }

  get empty(): boolean {
    return this.patterns.length === 0;
  }

  match(url: URL): DestinationMatch {
    const host = urlHost(url);
    const port = portOf(url);
    const hits = this.patterns.filter((p) => p.host.test(host) && p.ports.includes(port));
    return { allowed: hits.length > 0, explicit: hits.some((p) => p.exact) };
  }

  /** Whether a resolved address may be connected to: public unicast, or anything when named explicitly. */
  static addressAllowed(address: string, explicit: boolean): boolean {
    // The rule is the one QUARRY_SOURCE_ALLOW applies too (@quarry/runtime's host-address).
    return addressAllowed(address, explicit);
  }
}
