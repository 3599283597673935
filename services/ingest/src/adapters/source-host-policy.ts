import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { AppError } from '@quarry/errors';
import { addressAllowed, hostPattern, refusedAddress, urlHost } from '@quarry/runtime';
import type { CheckedAddress } from './source-staging';

/*
 * QUARRY_SOURCE_ALLOW: which host[:port] a source (a database or a URL) may reach, as
 * QUARRY_WEBHOOK_ALLOW does for webhooks (services/scheduler/src/domain/webhook-policy.ts; services do
 * not import each other, so what the two share, the host glob and which addresses are public, is
 * @quarry/runtime's host-address, and its tests' cases are this file's too).
 *
 * Guarantees of the check `makeHostPolicy` returns:
 * - a host must match a pattern: `db.example.com`, `*.example.com`, `10.0.0.5:5433`, `[::1]:8080`,
 *   `db.internal:*` (`*` in a host is any run of name characters; `:*` any port). A pattern without a
 *   port admits the default port of the target's kind only: 80 and 443 for http(s), 5432 for postgres,
 *   3306 for mysql; a bare host never means every port;
 * - every address the host has now (each one DNS gives, or the literal) must be public unicast, unless a
 *   pattern without `*` names the host: loopback, link-local (169.254.169.254), private, CGNAT, unique
 *   local, IPv4-mapped and IPv4-compatible forms of those, site-local fec0::/10, 100::/64 and the like
 *   are refused otherwise. One private address among public ones refuses the host (DNS could steer to it);
 * - an empty list refuses every host;
 * - a refusal is AppError FORBIDDEN naming the host and QUARRY_SOURCE_ALLOW; a host that does not
 *   resolve is INVALID_ARGUMENT (UNAVAILABLE for a DNS failure that may pass).
 * - the answer is the addresses checked; a reader dials those (source-staging's pinnedLookup), so a name
 *   whose DNS answer changes after the check (rebinding) still reaches only what was checked.
 */

/** The check, answering the addresses it admitted: the ones the reader must dial (pinnedLookup). */
export type HostPolicy = (target: URL) => Promise<readonly CheckedAddress[]>;

export type Resolver = (host: string) => Promise<Array<{ address: string; family: number }>>;

interface Pattern {
  host: RegExp;
  /** The ports it admits; `default` the target kind's own; `any` every one. */
  ports: number | 'default' | 'any';
  exact: boolean;
}

const DEFAULT_PORTS: Record<string, readonly number[]> = {
  'http:': [80, 443],
  'https:': [80, 443],
  'postgres:': [5432],
  'postgresql:': [5432],
  'mysql:': [3306],
  'mariadb:': [3306],
};

/** Each kind's own port, when its URL names none. */
const SCHEME_PORT: Record<string, number> = {
  'http:': 80,
  'https:': 443,
  'postgres:': 5432,
  'postgresql:': 5432,
  'mysql:': 3306,
  'mariadb:': 3306,
};

function portOf(url: URL): number | undefined {
  return url.port ? Number(url.port) : SCHEME_PORT[url.protocol];
}

function parsePattern(raw: string): Pattern {
  const m = /^(\[[^\]]+\]|[^:]+)(?::(\d+|\*))?$/.exec(raw.trim().toLowerCase());
  // An IPv6 literal without brackets (`::1`) is a host with no port.
  const bareV6 = !m && isIP(raw.trim()) === 6;
  const host = bareV6 ? raw.trim().toLowerCase() : (m?.[1] ?? raw.trim().toLowerCase());
  const port = m?.[2];
  return {
    ...hostPattern(host),
    ports: port === undefined ? 'default' : port === '*' ? 'any' : Number(port),
  };
}

/** Whether an address may be dialled: public unicast, or anything when a pattern names its host exactly. */
export { addressAllowed };

const defaultResolve: Resolver = (host) => lookup(host, { all: true, verbatim: true });

/**
 * The check of QUARRY_SOURCE_ALLOW (`allow`, its comma-separated patterns) for one target: a URL whose
 * scheme is the target's kind (`https://files.example.com/a.csv`, `postgres://db.example.com:5432`).
 * `resolve` is DNS unless a test gives its own.
 */
export function makeHostPolicy(allow: readonly string[], resolve: Resolver = defaultResolve): HostPolicy {
  const patterns = allow
    .map((p) => p.trim())
    .filter((p) => p !== '')
    .map(parsePattern);
  return async (target: URL) => {
    const host = urlHost(target);
    const port = portOf(target);
    const hostPort = `${target.hostname}${port !== undefined ? `:${port}` : ''}`;
    if (patterns.length === 0)
      throw AppError.forbidden(
        `Sources on other hosts are not enabled on this server (QUARRY_SOURCE_ALLOW is empty): ${hostPort} is refused`,
      );
    if (host === '') throw AppError.invalid('The source names no host');
    const defaults = DEFAULT_PORTS[target.protocol] ?? [];
    const hits = patterns.filter(
      (p) =>
        p.host.test(host) &&
        (p.ports === 'any' ||
          (port !== undefined && (p.ports === 'default' ? defaults.includes(port) : p.ports === port))),
    );
    if (hits.length === 0) throw AppError.forbidden(`${hostPort} does not match QUARRY_SOURCE_ALLOW`);
    const explicit = hits.some((p) => p.exact);
    let addresses: Array<{ address: string; family: number }>;
    try {
      addresses = isIP(host) ? [{ address: host, family: isIP(host) }] : await resolve(host);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? 'error';
      if (code === 'EAI_AGAIN' || code === 'ETIMEOUT' || code === 'ESERVFAIL')
        throw AppError.unavailable(`${target.hostname} could not be resolved now (${code})`);
      throw AppError.invalid(`${target.hostname} does not resolve (${code})`);
    }
    if (addresses.length === 0) throw AppError.invalid(`${target.hostname} does not resolve`);
    // Every address must pass: a name with one public and one private address could be steered to either.
    const refused = addresses.find((a) => !addressAllowed(a.address, explicit));
    if (refused)
      throw AppError.forbidden(
        `${refusedAddress(target.hostname, refused.address)}; loopback, link-local and private addresses are reached only through a QUARRY_SOURCE_ALLOW pattern naming the host exactly`,
      );
    return addresses.map(({ address, family }) => ({ address, family }));
  };
}
