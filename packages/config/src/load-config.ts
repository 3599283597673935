import path from 'node:path';
import { crossFieldProblems, envSchema, KNOWN_ENV_VARS, type Target } from './config.schema';

export type ServiceName = 'query' | 'crosstab' | 'chart' | 'reports';

export interface Config {
  targets: Target[];
  http: { host: string; port: number };
  dataDir: string;
  logLevel: string;
  redis: { url: string | undefined; serverPath: string };
  mongo: { url: string; db: string } | undefined;
  typesense: { url: string; apiKey: string } | undefined;
  chart: { chromiumPath: string; renderTimeoutMs: number; waitTimeoutMs: number; workerConcurrency: number };
  /** Where each gRPC service listens (when it runs here) or is reached (when it runs elsewhere). */
  grpc: { addrs: Record<ServiceName, string | undefined>; listenHost: string | undefined; deadlineMs: number };
  shutdownGraceMs: number;
  /** Port of /metrics, /healthz and /readyz in processes without the gateway (unset: none). */
  opsPort: number | undefined;
  /** Signs pagination cursors; unset: a key kept in the data directory. */
  cursorSecret: string | undefined;
}

export class ConfigError extends Error {
  readonly problems: string[];
  constructor(problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

/** Validates the whole environment at once and reports every problem, not just the first. */
export function loadConfig(env: Record<string, string | undefined>): Config {
  const known: Record<string, string | undefined> = {};
  for (const name of KNOWN_ENV_VARS) {
    const value = env[name];
    // An empty variable means "not set": shells and manifests often export VAR= to clear one.
    if (value !== undefined && value !== '') known[name] = value;
  }
  const parsed = envSchema.safeParse(known);
  const problems = [
    ...(parsed.success ? [] : parsed.error.issues.map((i) => `${i.path.join('.') || 'environment'}: ${i.message}`)),
    ...crossFieldProblems(known),
  ];
  if (!parsed.success || problems.length > 0) throw new ConfigError(problems);
  const e = parsed.data;
  return {
    targets: e.QUARRY_TARGET,
    http: { host: e.HOST, port: e.PORT },
    dataDir: path.resolve(e.QUARRY_DATA_DIR),
    logLevel: e.LOG_LEVEL,
    redis: { url: e.REDIS_URL, serverPath: e.REDIS_SERVER_PATH },
    mongo: e.MONGODB_URL ? { url: e.MONGODB_URL, db: e.MONGODB_DB } : undefined,
    typesense: e.TYPESENSE_URL && e.TYPESENSE_API_KEY ? { url: e.TYPESENSE_URL, apiKey: e.TYPESENSE_API_KEY } : undefined,
    chart: {
      chromiumPath: e.CHROMIUM_PATH,
      renderTimeoutMs: e.CHART_RENDER_TIMEOUT_MS,
      waitTimeoutMs: e.CHART_WAIT_TIMEOUT_MS,
      workerConcurrency: e.CHART_WORKER_CONCURRENCY,
    },
    grpc: {
      addrs: {
        query: e.QUARRY_QUERY_ADDR,
        crosstab: e.QUARRY_CROSSTAB_ADDR,
        chart: e.QUARRY_CHART_ADDR,
        reports: e.QUARRY_REPORTS_ADDR,
      },
      listenHost: e.QUARRY_GRPC_LISTEN_HOST,
      deadlineMs: e.QUARRY_GRPC_DEADLINE_MS,
    },
    shutdownGraceMs: e.QUARRY_SHUTDOWN_GRACE_MS,
    cursorSecret: e.QUARRY_CURSOR_SECRET,
    opsPort: e.QUARRY_OPS_PORT,
  };
}

export const DEFAULT_SERVICE_PORTS: Record<ServiceName, number> = { query: 50051, crosstab: 50052, chart: 50053, reports: 50054 };

/** Where a service is reached: its configured address, else its default port on loopback. */
export function serviceAddr(config: Config, service: ServiceName): string {
  return config.grpc.addrs[service] ?? `127.0.0.1:${DEFAULT_SERVICE_PORTS[service]}`;
}

/**
 * Where a service listens. Hosted with the gateway and not configured, it takes a free loopback
 * port (the gateway is told which); otherwise it binds its address's port, on QUARRY_GRPC_LISTEN_HOST
 * when set (0.0.0.0 in containers, where the address names the service's DNS name).
 */
export function serviceListenAddr(config: Config, service: ServiceName): string {
  const configured = config.grpc.addrs[service];
  if (!configured && config.targets.includes('gateway')) return '127.0.0.1:0';
  const addr = serviceAddr(config, service);
  const port = addr.slice(addr.lastIndexOf(':') + 1);
  const host = config.grpc.listenHost ?? addr.slice(0, addr.lastIndexOf(':'));
  return `${host}:${port}`;
}
