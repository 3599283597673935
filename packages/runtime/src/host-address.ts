import ipaddr from 'ipaddr.js';

/*
 * What the allow-lists of outbound hosts share (QUARRY_WEBHOOK_ALLOW in the scheduler, QUARRY_SOURCE_ALLOW
 * in ingest): a URL's host as patterns see it, a pattern's host as a glob, and which addresses count as
 * public. Each policy keeps its own ports, resolution and messages.
 */

/**
 * IPv6 blocks ipaddr.js calls 'unicast' that are not public: IPv4-compatible addresses (::7f00:1 is
 * 127.0.0.1 to some stacks), deprecated site-local (fec0::/10, private in effect) and the discard prefix.
 */
const NOT_PUBLIC_V6: ReadonlyArray<[string, number]> = [
  ['::', 96],
  ['fec0::', 10],
  ['100::', 64],
];

/** A URL's host, lower-case, an IPv6 literal without its brackets (URL keeps them). */
export function urlHost(url: URL): string {
  return url.hostname.toLowerCase().replace(/^\[|\]$/g, '');
}

/**
 * A pattern's host (`db.example.com`, `*.example.com`, `[::1]`) as a regular expression over urlHost's
 * answer: `*` is any run of name characters. `exact` when it has no `*`: an operator named that host.
 */
export function hostPattern(host: string): { host: RegExp; exact: boolean } {
  const bare = host.replace(/^\[|\]$/g, '');
  const escaped = bare.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[a-z0-9._:-]*');
  return { host: new RegExp(`^${escaped}$`), exact: !bare.includes('*') };
}

/**
 * Whether an address may be dialled: public unicast, or anything when a pattern names its host exactly
 * (`explicit`). Loopback, link-local, private, CGNAT, unique local, the IPv4-mapped and IPv4-compatible
 * forms of those and the blocks above are not public.
 */
export function addressAllowed(address: string, explicit: boolean): boolean {
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

/** ipaddr.js's name for an address's range (`loopback`, `private`, …), or `invalid`. */
/** ipaddr.js's range names as a message reads them. */
const RANGE_NAMES: Record<string, string> = {
  linkLocal: 'link-local',
  uniqueLocal: 'unique local',
  carrierGradeNat: 'carrier-grade NAT',
  siteLocal: 'site-local',
  ipv4Mapped: 'IPv4-mapped',
  rfc6145: 'IPv4-translated',
  rfc6052: 'IPv4-embedded',
  teredo: 'Teredo',
  amt: 'AMT',
  as112: 'AS112',
  as112v6: 'AS112',
  orchid2: 'ORCHIDv2',
  droneRemoteIdProtocolEntityTags: 'drone remote ID',
};

export function addressRange(address: string): string {
  if (!ipaddr.isValid(address)) return 'invalid';
  const range = ipaddr.process(address).range();
  return RANGE_NAMES[range] ?? range;
}

/**
 * How a refusal names a refused address: the address itself only where the caller wrote it. That a name
 * resolves to 10.1.2.3 is the operator's network, not something a caller probing names should learn.
 */
export function refusedAddress(hostname: string, address: string): string {
  const host = hostname.replace(/^\[|\]$/g, '');
  return ipaddr.isValid(host)
    ? `${hostname} is a ${addressRange(address)} address`
    : `${hostname} resolves to a ${addressRange(address)} address`;
}
