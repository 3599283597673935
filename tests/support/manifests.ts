import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { KNOWN_ENV_VARS, loadConfig, type Target } from '@quarry/config';

export interface ContainerEnv {
  where: string;
  target: Target | 'loader';
  env: Record<string, string>;
}

// A secret may be set directly or as a file its _FILE variant names: either satisfies the need.
const CURSOR_SECRET = 'QUARRY_CURSOR_SECRET|QUARRY_CURSOR_SECRET_FILE';
const INTERNAL_TOKEN = 'QUARRY_INTERNAL_TOKEN|QUARRY_INTERNAL_TOKEN_FILE';

/** What each target cannot run without in a split deployment (config defaults cover the rest); a|b means either. */
export const REQUIRED_BY_TARGET: Record<Target | 'loader', string[]> = {
  gateway: [
    'QUARRY_TARGET',
    'QUARRY_DATA_DIR',
    'MONGODB_URL',
    'QUARRY_QUERY_ADDR',
    'QUARRY_CROSSTAB_ADDR',
    'QUARRY_CHART_ADDR',
    'QUARRY_REPORTS_ADDR',
    // Uploads are streamed to the ingest service: without it the gateway would dial its own loopback.
    'QUARRY_INGEST_ADDR',
    INTERNAL_TOKEN,
    // The data directory is read-only for the gateway: the embed-token key cannot be made there.
    'QUARRY_EMBED_SECRET|QUARRY_EMBED_SECRET_FILE',
    // Nor the keys of scheduled deliveries, which every gateway replica must share.
    'QUARRY_WEBHOOK_KEY|QUARRY_WEBHOOK_KEY_FILE',
    'QUARRY_LINK_KEY|QUARRY_LINK_KEY_FILE',
    // A pod's own address is no address for a delivery's recipients.
    'QUARRY_PUBLIC_URL',
  ],
  query: [
    'QUARRY_TARGET',
    'QUARRY_DATA_DIR',
    'MONGODB_URL',
    'QUARRY_QUERY_ADDR',
    'QUARRY_GRPC_LISTEN_HOST',
    CURSOR_SECRET,
    'QUARRY_SEARCH_BACKEND',
    'TYPESENSE_URL',
    'TYPESENSE_API_KEY',
    INTERNAL_TOKEN,
  ],
  crosstab: [
    'QUARRY_TARGET',
    'QUARRY_DATA_DIR',
    'MONGODB_URL',
    'QUARRY_CROSSTAB_ADDR',
    'QUARRY_GRPC_LISTEN_HOST',
    INTERNAL_TOKEN,
  ],
  chart: ['QUARRY_TARGET', 'REDIS_URL', 'QUARRY_CHART_ADDR', 'QUARRY_GRPC_LISTEN_HOST', INTERNAL_TOKEN],
  reports: [
    'QUARRY_TARGET',
    'QUARRY_DATA_DIR',
    'MONGODB_URL',
    'QUARRY_REPORTS_ADDR',
    'QUARRY_GRPC_LISTEN_HOST',
    CURSOR_SECRET,
    INTERNAL_TOKEN,
  ],
  'chart-worker': ['QUARRY_TARGET', 'REDIS_URL', 'CHROMIUM_PATH'],
  ingest: [
    'QUARRY_TARGET',
    'QUARRY_DATA_DIR',
    'MONGODB_URL',
    'QUARRY_INGEST_ADDR',
    'QUARRY_GRPC_LISTEN_HOST',
    'QUARRY_SEARCH_BACKEND',
    'TYPESENSE_URL',
    'TYPESENSE_API_KEY',
    INTERNAL_TOKEN,
  ],
  loader: ['QUARRY_DATA_DIR', 'MONGODB_URL', 'QUARRY_SEARCH_BACKEND', 'TYPESENSE_URL', 'TYPESENSE_API_KEY'],
};

// Set by the images or the platform, not read by Quarry's config.
const FOREIGN = new Set(['NODE_ENV']);

/** Every problem with one container's environment: unknown names, missing required ones, invalid values. */
export function envProblems(c: ContainerEnv): string[] {
  const problems: string[] = [];
  for (const name of Object.keys(c.env)) {
    if (!KNOWN_ENV_VARS.includes(name) && !FOREIGN.has(name))
      problems.push(`${c.where}: sets ${name}, which Quarry's config does not know`);
  }
  for (const need of REQUIRED_BY_TARGET[c.target]) {
    const [name, ...alternatives] = need.split('|');
    if (![name, ...alternatives].some((n) => n in c.env)) {
      const or = alternatives.length ? ` (or ${alternatives.join(', ')})` : '';
      problems.push(`${c.where}: leaves out ${name}${or}, which target ${c.target} needs`);
    }
  }
  try {
    loadConfig(withStandInSecretFiles(c.env));
  } catch (err) {
    problems.push(`${c.where}: ${(err as Error).message}`);
  }
  return problems;
}

let standInDir: string | undefined;

/**
 * The files that *_FILE variables name are made when the deployment first starts (infra/init-secrets.sh),
 * so they do not exist here: each is replaced by a stand-in file holding a valid random secret, and the
 * rest of the environment is validated as the process would.
 */
function withStandInSecretFiles(env: Record<string, string>): Record<string, string> {
  const out = { ...env };
  for (const [name, value] of Object.entries(env)) {
    if (!name.endsWith('_FILE') || value === '') continue;
    standInDir ??= fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-manifest-secrets-'));
    const file = path.join(standInDir, name);
    fs.writeFileSync(file, `${randomBytes(32).toString('base64url')}\n`, { mode: 0o600 });
    out[name] = file;
  }
  return out;
}

// ---- NetworkPolicy, evaluated as Kubernetes documents it (concepts/services-networking/network-policies) ----

export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: Array<{ key: string; operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist'; values?: string[] }>;
}

interface PolicyPeer {
  podSelector?: LabelSelector;
  namespaceSelector?: LabelSelector;
  ipBlock?: { cidr: string; except?: string[] };
}

interface PolicyPort {
  port?: number | string;
  endPort?: number;
  protocol?: string;
}

export interface NetworkPolicyDoc {
  kind: 'NetworkPolicy';
  metadata: { name: string; namespace?: string };
  spec: {
    podSelector: LabelSelector;
    policyTypes?: Array<'Ingress' | 'Egress'>;
    ingress?: Array<{ from?: PolicyPeer[]; ports?: PolicyPort[] }>;
    egress?: Array<{ to?: PolicyPeer[]; ports?: PolicyPort[] }>;
  };
}

/** One end of a connection: a pod (its namespace, labels and named container ports) or an address outside the cluster. */
export type Endpoint =
  { pod: { namespace: string; labels: Record<string, string>; ports?: Record<string, number> } } | { ip: string };

/** An empty selector selects everything; matchLabels and matchExpressions must all hold. */
export function selects(selector: LabelSelector, labels: Record<string, string>): boolean {
  const byLabel = Object.entries(selector.matchLabels ?? {}).every(([k, v]) => labels[k] === v);
  const byExpression = (selector.matchExpressions ?? []).every(({ key, operator, values = [] }) => {
    switch (operator) {
      case 'In':
        return key in labels && values.includes(labels[key]);
      case 'NotIn':
        return !(key in labels) || !values.includes(labels[key]);
      case 'Exists':
        return key in labels;
      case 'DoesNotExist':
        return !(key in labels);
    }
  });
  return byLabel && byExpression;
}

function ipv4(ip: string): number {
  const parts = ip.split('.').map(Number);
  if (parts.length !== 4 || parts.some((p) => !Number.isInteger(p) || p < 0 || p > 255))
    throw new Error(`not an IPv4 address: ${ip}`);
  return parts.reduce((n, p) => n * 256 + p, 0);
}

function inCidr(ip: string, cidr: string): boolean {
  const [base, bits] = cidr.split('/');
  const size = 2 ** (32 - Number(bits));
  return Math.floor(ipv4(ip) / size) === Math.floor(ipv4(base) / size);
}

// The control plane labels every namespace with its own name (kubernetes.io/metadata.name).
const namespaceLabels = (namespace: string) => ({ 'kubernetes.io/metadata.name': namespace });

function peerMatches(peer: PolicyPeer, policyNamespace: string, other: Endpoint): boolean {
  if (peer.ipBlock)
    return (
      'ip' in other &&
      inCidr(other.ip, peer.ipBlock.cidr) &&
      !(peer.ipBlock.except ?? []).some((c) => inCidr(other.ip, c))
    );
  if (!('pod' in other)) return false;
  // A namespaceSelector and a podSelector in the same peer must both hold; a podSelector alone means the policy's namespace.
  if (
    peer.namespaceSelector
      ? !selects(peer.namespaceSelector, namespaceLabels(other.pod.namespace))
      : other.pod.namespace !== policyNamespace
  )
    return false;
  return peer.podSelector ? selects(peer.podSelector, other.pod.labels) : true;
}

function portMatches(ports: PolicyPort[] | undefined, port: number, protocol: string, destination: Endpoint): boolean {
  if (!ports || ports.length === 0) return true;
  const named = 'pod' in destination ? (destination.pod.ports ?? {}) : {};
  return ports.some((p) => {
    if ((p.protocol ?? 'TCP') !== protocol) return false;
    if (p.port === undefined) return true;
    const start = typeof p.port === 'string' ? named[p.port] : p.port;
    return start !== undefined && port >= start && port <= (p.endPort ?? start);
  });
}

const policyTypes = (p: NetworkPolicyDoc) =>
  p.spec.policyTypes ?? (p.spec.egress ? ['Ingress', 'Egress'] : ['Ingress']);

/**
 * Whether a connection from one endpoint to another, on a port, passes every NetworkPolicy: a pod that
 * some policy selects for a direction is isolated in it, and then some rule of those policies must
 * allow the other end and the port; connections need the egress of their source and the ingress of
 * their destination.
 */
export function connectionAllowed(
  policies: NetworkPolicyDoc[],
  from: Endpoint,
  to: Endpoint,
  port: number,
  protocol = 'TCP',
): boolean {
  const side = (self: Endpoint, other: Endpoint, direction: 'Ingress' | 'Egress') => {
    if (!('pod' in self)) return true;
    const selecting = policies.filter(
      (p) =>
        (p.metadata.namespace ?? '') === self.pod.namespace &&
        policyTypes(p).includes(direction) &&
        selects(p.spec.podSelector, self.pod.labels),
    );
    if (selecting.length === 0) return true;
    return selecting.some((p) => {
      const rules =
        direction === 'Ingress'
          ? (p.spec.ingress ?? []).map((r) => ({ peers: r.from, ports: r.ports }))
          : (p.spec.egress ?? []).map((r) => ({ peers: r.to, ports: r.ports }));
      return rules.some(
        (r) =>
          (!r.peers ||
            r.peers.length === 0 ||
            r.peers.some((peer) => peerMatches(peer, p.metadata.namespace ?? '', other))) &&
          portMatches(r.ports, port, protocol, to),
      );
    });
  };
  return side(from, to, 'Egress') && side(to, from, 'Ingress');
}
