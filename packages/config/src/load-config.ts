import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { loadGrpcTls, MAX_SECRET_FILE_BYTES, readSettingFile, type GrpcTlsFiles } from './config-files';
import {
  crossFieldProblems,
  EMPTY_REFUSED,
  envSchema,
  KNOWN_ENV_VARS,
  TARGETS,
  TLS_VARS,
  type Env,
} from './config.schema';
import type { TracingSettings } from './tracing-settings';

export type ServiceName = 'query' | 'crosstab' | 'chart' | 'reports' | 'ingest';

/**
 * The settings as the modules read them: grouped, in their units (bytes, milliseconds), paths resolved.
 * Its type is what configFromEnv makes of the schema's output; what each setting means is documented
 * beside its rule in settings/.
 */
export type Config = ReturnType<typeof configFromEnv>;

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
  const problems: string[] = [];
  for (const name of KNOWN_ENV_VARS) {
    const value = env[name];
    // An empty variable means "not set": shells and manifests often export VAR= to clear one. Not for
    // stores, secrets and the search backend, where that silently chose another store (EMPTY_REFUSED).
    if (value === '' && EMPTY_REFUSED.includes(name))
      problems.push(`${name}: is set but empty; give it a value or leave it out`);
    if (value !== undefined && value !== '') known[name] = value;
  }
  const fromFile = readSecretFiles(known, problems);
  const parsed = envSchema.safeParse(known);
  if (!parsed.success) {
    for (const i of parsed.error.issues) {
      const name = String(i.path[0] ?? '');
      const where = fromFile.has(name) ? `${name} (read from ${name}_FILE)` : i.path.join('.') || 'environment';
      problems.push(`${where}: ${i.message}`);
    }
  }
  problems.push(...crossFieldProblems(known));
  const [cert, key, ca] = TLS_VARS.map((name) => known[name]);
  let tls: GrpcTlsFiles | undefined;
  if (cert && key && ca) {
    const loaded = loadGrpcTls({ cert, key, ca });
    if ('problems' in loaded) problems.push(...loaded.problems);
    else tls = loaded.tls;
  }
  if (!parsed.success || problems.length > 0) throw new ConfigError(problems);
  return configFromEnv(parsed.data, known, tls);
}

/** Where each setting goes in Config; the one place that names them besides the schema. */
function configFromEnv(e: Env, known: Record<string, string | undefined>, tls: GrpcTlsFiles | undefined) {
  return {
    targets: e.QUARRY_TARGET,
    http: { host: e.HOST, port: e.PORT, corsOrigins: e.QUARRY_CORS_ORIGINS, bodyTimeoutMs: e.QUARRY_BODY_TIMEOUT_MS },
    /** Per token; undefined: no limit. */
    rateLimit:
      e.QUARRY_RATE_LIMIT === undefined
        ? undefined
        : { perSecond: e.QUARRY_RATE_LIMIT, burst: e.QUARRY_RATE_BURST ?? 0, keyPrefix: e.QUARRY_RATE_LIMIT_PREFIX },
    /** Per client address, calls without a valid token; undefined: no limit. */
    anonRateLimit:
      e.QUARRY_ANON_RATE_LIMIT === 0
        ? undefined
        : { perSecond: e.QUARRY_ANON_RATE_LIMIT, burst: e.QUARRY_ANON_RATE_BURST },
    embedSecret: e.QUARRY_EMBED_SECRET,
    /** Set when an OpenID provider is configured: bearer JWTs from it are users. */
    oidc:
      e.QUARRY_OIDC_ISSUER && e.QUARRY_OIDC_AUDIENCE
        ? {
            issuer: e.QUARRY_OIDC_ISSUER,
            audience: e.QUARRY_OIDC_AUDIENCE,
            userClaim: e.QUARRY_OIDC_USER_CLAIM,
            scopesClaim: e.QUARRY_OIDC_SCOPES_CLAIM,
            ...(e.QUARRY_OIDC_INDEXES_CLAIM ? { indexesClaim: e.QUARRY_OIDC_INDEXES_CLAIM } : {}),
            realms: e.QUARRY_OIDC_REALMS ?? {},
            ...(e.QUARRY_OIDC_CLIENT_ID ? { clientId: e.QUARRY_OIDC_CLIENT_ID } : {}),
          }
        : undefined,
    embedTokensPerUser: e.QUARRY_EMBED_TOKENS_PER_USER,
    auditDays: e.QUARRY_AUDIT_DAYS,
    exportTtlS: e.QUARRY_EXPORT_TTL_S,
    exportMaxRows: e.QUARRY_EXPORT_MAX_ROWS,
    uploadMaxBytes: e.QUARRY_UPLOAD_MAX_MB * 1_048_576,
    exportDir: path.resolve(e.QUARRY_EXPORT_DIR ?? path.join(e.QUARRY_DATA_DIR, 'exports')),
    exportConcurrency: e.QUARRY_EXPORT_CONCURRENCY,
    exportMaxPerUser: e.QUARRY_EXPORT_MAX_PER_USER,
    exportMinFreeBytes: e.QUARRY_EXPORT_MIN_FREE_MB * 1_048_576,
    exportProgressMs: e.QUARRY_EXPORT_PROGRESS_MS,
    exportMemoryBytes: e.QUARRY_EXPORT_MEMORY_MB * 1_048_576,
    /** Deliveries over attachmentMaxBytes go as signed links (schedules). */
    deliveryLinks: {
      attachmentMaxBytes: e.QUARRY_ATTACHMENT_MAX_BYTES,
      ttlS: e.QUARRY_SIGNED_LINK_TTL_S,
      publicUrl: e.QUARRY_PUBLIC_URL,
      key: e.QUARRY_LINK_KEY,
    },
    dataDir: path.resolve(e.QUARRY_DATA_DIR),
    /** QUARRY_DATA_DIR was not set: dataDir is the default ./data, which the CLI says it reads. */
    dataDirDefaulted: known.QUARRY_DATA_DIR === undefined,
    logLevel: e.LOG_LEVEL,
    /** Decided once, in the main thread: a services thread's own stdout is never a terminal. */
    logFormat: e.QUARRY_LOG_FORMAT ?? (process.stdout.isTTY ? ('pretty' as const) : ('json' as const)),
    /** `privateMaxmemory`: the cap of the redis-server started when REDIS_URL is unset. */
    redis: {
      url: redisUrlWithPassword(e.REDIS_URL, e.REDIS_PASSWORD),
      serverPath: e.REDIS_SERVER_PATH,
      privateMaxmemory: e.QUARRY_PRIVATE_REDIS_MAXMEMORY,
    },
    mongo: e.MONGODB_URL ? { url: e.MONGODB_URL, db: e.MONGODB_DB } : undefined,
    searchBackend: e.QUARRY_SEARCH_BACKEND,
    /** Set exactly when the search backend is Typesense. */
    typesense:
      e.QUARRY_SEARCH_BACKEND === 'typesense' && e.TYPESENSE_URL && e.TYPESENSE_API_KEY
        ? { url: e.TYPESENSE_URL, apiKey: e.TYPESENSE_API_KEY }
        : undefined,
    /** The crosstab engine, read once at start. */
    pivotEngine: e.QUARRY_PIVOT_ENGINE,
    /** A ClickHouse server or cluster for the crosstab engine; unset with `clickhouse`: chDB in-process. */
    clickhouse: e.CLICKHOUSE_URL
      ? { url: e.CLICKHOUSE_URL, database: e.CLICKHOUSE_DATABASE, cluster: e.CLICKHOUSE_CLUSTER }
      : undefined,
    chart: {
      chromiumPath: e.CHROMIUM_PATH,
      renderTimeoutMs: e.CHART_RENDER_TIMEOUT_MS,
      waitTimeoutMs: e.CHART_WAIT_TIMEOUT_MS,
      workerConcurrency: e.CHART_WORKER_CONCURRENCY,
      queueMaxWaiting: e.CHART_QUEUE_MAX_WAITING,
      chromiumIdleMs: e.QUARRY_CHROMIUM_IDLE_S * 1000,
    },
    /** Where each gRPC service listens (when it runs here) or is reached (when it runs elsewhere). */
    grpc: {
      addrs: {
        query: e.QUARRY_QUERY_ADDR,
        crosstab: e.QUARRY_CROSSTAB_ADDR,
        chart: e.QUARRY_CHART_ADDR,
        reports: e.QUARRY_REPORTS_ADDR,
        ingest: e.QUARRY_INGEST_ADDR,
      },
      listenHost: e.QUARRY_GRPC_LISTEN_HOST,
      deadlineMs: e.QUARRY_GRPC_DEADLINE_MS,
      // Unset is allowed only when no other process needs it (crossFieldProblems): a fresh one each start.
      internalToken: e.QUARRY_INTERNAL_TOKEN ?? randomBytes(32).toString('base64url'),
      /** mTLS between the processes when configured: PEM text read once at start. */
      tls,
    },
    shutdownGraceMs: e.QUARRY_SHUTDOWN_GRACE_MS,
    drainDelayMs: e.QUARRY_DRAIN_DELAY_MS,
    cursorSecret: e.QUARRY_CURSOR_SECRET,
    heavyCalls: {
      maxRunning: e.QUARRY_MAX_CONCURRENT_QUERIES,
      maxQueued: e.QUARRY_MAX_QUEUED_QUERIES,
      perCaller: e.QUARRY_HEAVY_PER_CALLER,
    },
    tableThreads: e.QUARRY_TABLE_THREADS,
    resultCacheBytes: e.QUARRY_CACHE_MB * 1024 * 1024,
    memoryIndexBytes: e.QUARRY_MEMORY_INDEX_MB * 1024 * 1024,
    duckdbMemoryBytes: e.QUARRY_DUCKDB_MEMORY_MB === undefined ? undefined : e.QUARRY_DUCKDB_MEMORY_MB * 1024 * 1024,
    openIndexBytes: e.QUARRY_OPEN_INDEX_MB === undefined ? undefined : e.QUARRY_OPEN_INDEX_MB * 1024 * 1024,
    duckdbTempDir: e.QUARRY_DUCKDB_TEMP_DIR === undefined ? undefined : path.resolve(e.QUARRY_DUCKDB_TEMP_DIR),
    duckdbTempMaxBytes:
      e.QUARRY_DUCKDB_TEMP_MAX_MB === undefined ? undefined : e.QUARRY_DUCKDB_TEMP_MAX_MB * 1024 * 1024,
    opsPort: e.QUARRY_OPS_PORT,
    opsHost: e.QUARRY_OPS_HOST,
    schedules: {
      minIntervalSeconds: e.QUARRY_SCHEDULE_MIN_INTERVAL_S,
      perUser: e.QUARRY_SCHEDULES_PER_USER,
      deliveriesPerDay: e.QUARRY_DELIVERIES_PER_DAY,
      recipientsPerDay: e.QUARRY_RECIPIENTS_PER_DAY,
      webhookAllow: e.QUARRY_WEBHOOK_ALLOW.split(',')
        .map((p) => p.trim())
        .filter(Boolean),
      webhookKey: e.QUARRY_WEBHOOK_KEY,
      smtpUrl: e.QUARRY_SMTP_URL,
      smtpFrom: e.QUARRY_SMTP_FROM,
      backoffMs: e.QUARRY_DELIVERY_BACKOFF_MS,
    },
    sources: {
      allow: e.QUARRY_SOURCE_ALLOW.split(',')
        .map((p) => p.trim())
        .filter(Boolean),
      fileDirs: e.QUARRY_SOURCE_FILE_DIRS.split(',')
        .map((p) => p.trim())
        .filter(Boolean)
        .map((p) => path.resolve(p)),
      key: e.QUARRY_SOURCE_KEY,
      perUser: e.QUARRY_SOURCES_PER_USER,
      concurrency: e.QUARRY_SOURCE_CONCURRENCY,
    },
    reportTrashDays: e.QUARRY_REPORT_TRASH_DAYS,
    snapshotKeepBytes: Math.floor(e.QUARRY_SNAPSHOT_KEEP_MB * 1024 * 1024),
    /** OpenTelemetry traces over OTLP/HTTP; undefined (no endpoint, or OTEL_SDK_DISABLED=true): off. */
    tracing: tracingSettings(e),
  };
}

/**
 * The trace export of OTEL_* (OpenTelemetry's "OTLP Exporter Configuration"): the signal's own endpoint
 * as given, else the base endpoint with v1/traces appended; the signal's protocol before the general one.
 */
function tracingSettings(e: Env): TracingSettings | undefined {
  // Only "true" disables (the specification: any other value, or none, leaves the SDK on).
  if (e.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return undefined;
  const base = e.OTEL_EXPORTER_OTLP_ENDPOINT;
  const url = e.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? (base && `${base}${base.endsWith('/') ? '' : '/'}v1/traces`);
  if (!url) return undefined;
  const resourceAttributes = e.OTEL_RESOURCE_ATTRIBUTES ?? {};
  const targets = e.QUARRY_TARGET;
  return {
    url,
    protocol: e.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? e.OTEL_EXPORTER_OTLP_PROTOCOL,
    headers: e.OTEL_EXPORTER_OTLP_HEADERS ?? {},
    // A process is named for what it runs (quarry-gateway, quarry-chart-worker), so a trace shows which
    // deployment each span came from; all-in-one is plain "quarry".
    serviceName:
      e.OTEL_SERVICE_NAME ??
      resourceAttributes['service.name'] ??
      (targets.length === TARGETS.length ? 'quarry' : `quarry-${targets.join('-')}`),
    resourceAttributes,
    sampler: e.OTEL_TRACES_SAMPLER,
    samplerRatio: e.OTEL_TRACES_SAMPLER_ARG,
    scheduleDelayMs: e.OTEL_BSP_SCHEDULE_DELAY,
    timeoutMs: e.OTEL_EXPORTER_OTLP_TIMEOUT,
  };
}

/** Secrets that may instead come from a mounted file, named by the same variable with _FILE. */
const SECRET_FILE_VARS = [
  'QUARRY_CURSOR_SECRET',
  'QUARRY_INTERNAL_TOKEN',
  'REDIS_PASSWORD',
  'QUARRY_EMBED_SECRET',
  'QUARRY_WEBHOOK_KEY',
  'QUARRY_LINK_KEY',
  'QUARRY_SOURCE_KEY',
] as const;

/** REDIS_URL with REDIS_PASSWORD put in it (crossFieldProblems has made sure it had none). */
function redisUrlWithPassword(url: string | undefined, password: string | undefined): string | undefined {
  if (!url || password === undefined) return url;
  const u = new URL(url);
  u.password = password;
  return u.toString();
}

/**
 * Puts each X_FILE's content in place of X, so it is validated by X's own rule; returns the names
 * that came from a file, for the problems to say so.
 */
function readSecretFiles(known: Record<string, string | undefined>, problems: string[]): Set<string> {
  const fromFile = new Set<string>();
  for (const name of SECRET_FILE_VARS) {
    const file = known[`${name}_FILE`];
    if (file === undefined) continue;
    if (known[name] !== undefined) {
      problems.push(`${name}, ${name}_FILE: set one of them, not both`);
      continue;
    }
    const read = readSettingFile(file, MAX_SECRET_FILE_BYTES);
    if ('problem' in read) {
      problems.push(`${name}_FILE: ${read.problem}`);
      continue;
    }
    // Secret files usually end in a newline (echo, editors); the value is what is on the line.
    known[name] = read.text.trim();
    fromFile.add(name);
  }
  return fromFile;
}

export const DEFAULT_SERVICE_PORTS: Record<ServiceName, number> = {
  query: 50051,
  crosstab: 50052,
  chart: 50053,
  reports: 50054,
  ingest: 50055,
};

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
