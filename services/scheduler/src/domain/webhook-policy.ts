import ipaddr from 'ipaddr.js';

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

/**
 * IPv6 blocks ipaddr.js calls 'unicast' that are not public: IPv4-compatible addresses (::7f00:1 is
 * 127.0.0.1 to some stacks), deprecated site-local (fec0::/10, private in effect) and the discard prefix.
 */
const NOT_PUBLIC_V6: ReadonlyArray<[string, number]> = [
  ['::', 96],
  ['fec0::', 10],
  ['100::', 64],
];

function hostOf(url: URL): string {
  // URL keeps IPv6 literals in brackets.
  return url.hostname.toLowerCase().replace(/^\[|\]$/g, '');
}

export function portOf(url: URL): number {
  return url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
}

export class WebhookPolicy {
  private readonly patterns: Pattern[];

  constructor(patterns: readonly string[]) {
    this.patterns = patterns.map((raw) => {
      const m = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(raw.trim().toLowerCase());
      const host = (m?.[1] ?? raw).replace(/^\[|\]$/g, '');
      const escaped = host.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[a-z0-9._:-]*');
      return {
        host: new RegExp(`^${escaped}$`),
        ports: m?.[2] ? [Number(m[2])] : WEB_PORTS,
        exact: !host.includes('*'),
      };
    });
  }

  get empty(): boolean {
    return this.patterns.length === 0;
  }

  match(url: URL): DestinationMatch {
    const host = hostOf(url);
    const port = portOf(url);
    const hits = this.patterns.filter((p) => p.host.test(host) && p.ports.includes(port));
    return { allowed: hits.length > 0, explicit: hits.some((p) => p.exact) };
  }

  /** Whether a resolved address may be connected to: public unicast, or anything when named explicitly. */
  static addressAllowed(address: string, explicit: boolean): boolean {
    if (explicit) return true;
    if (!ipaddr.isValid(address)) return false;
    // process() turns ::ffff:10.0.0.1 into 10.0.0.1, so a mapped address is judged as the IPv4 it is.
    const ip = ipaddr.process(address);
    if (ip.range() !== 'unicast') return false;
    if (ip.kind() === 'ipv6') {
      const v6 = ip as ipaddr.IPv6;
      if (NOT_PUBLIC_V6.some(([net, bits]) => v6.match(ipaddr.IPv6.parse(net), bits))) return false;
    }
    return true;
  }
}
