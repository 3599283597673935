import { z } from 'zod';
import { OTLP_PROTOCOLS, SAMPLERS } from './tracing-settings';

export const TARGETS = ['gateway', 'query', 'crosstab', 'chart', 'chart-worker', 'reports'] as const;
export type Target = (typeof TARGETS)[number];

export const SEARCH_BACKENDS = ['embedded', 'typesense'] as const;
export type SearchBackend = (typeof SEARCH_BACKENDS)[number];

/**
 * Variables whose empty value is refused rather than read as unset (issue #28 item 7). They are the
 * keys of the Secrets in k8s/overlays/prod/secrets/*.env.example, which promise that "an empty value is
 * not accepted: every process refuses to start with one", and the search backend's: read as unset, an
 * empty MONGODB_URL would silently put the metadata in a local SQLite file, an empty TYPESENSE_API_KEY
 * silently search another engine than the loader filled.
 */
export const EMPTY_REFUSED: readonly string[] = [
  'MONGODB_URL',
  'REDIS_URL',
  'REDIS_PASSWORD',
  'TYPESENSE_URL',
  'TYPESENSE_API_KEY',
  'QUARRY_CURSOR_SECRET',
  'QUARRY_EMBED_SECRET',
  'QUARRY_SEARCH_BACKEND',
  'QUARRY_WEBHOOK_KEY',
];

const hostPort = z.string().regex(/^[A-Za-z0-9.\-[\]:]+:\d{1,5}$/, 'must be HOST:PORT (port 0 picks a free one)');

const url = (protocols: string[]) =>
  z.string().refine(
    (v) => {
      try {
        return protocols.includes(new URL(v).protocol);
      } catch {
        return false;
      }
    },
    `must be a URL with scheme ${protocols.join(' or ')}`,
  );

const targetList = z
  .string()
  .transform((raw) =>
    raw
      .split(',')
      .map((t) => t.trim())
      .filter(Boolean),
  )
  .pipe(
    z
      .array(
        z.union([z.literal('all'), z.enum(TARGETS)], {
          error: (i) => `unknown target "${String(i.input)}"; use all or ${TARGETS.join(', ')}`,
        }),
      )
      .min(1, 'names no target'),
  )
  .transform((list): Target[] => (list.includes('all') ? [...TARGETS] : [...new Set(list as Target[])]));

const durationMs = z.coerce.number().int().positive();

// redis-server's notation: k/m/g are powers of 1000, kb/mb/gb of 1024. Checked here because it goes
// to the server's command line; a cap below a few MB leaves the chart queue no room at all.
const REDIS_UNITS: Record<string, number> = { '': 1, k: 1e3, kb: 1024, m: 1e6, mb: 1024 ** 2, g: 1e9, gb: 1024 ** 3 };
const redisMemory = z
  .string()
  .trim()
  .regex(/^\d{1,15}(k|kb|m|mb|g|gb)?$/i, 'must be a redis-server size such as 256mb or 1gb')
  .refine((v) => {
    const [, n, unit] = /^(\d+)([a-z]*)$/i.exec(v) ?? [];
    return Number(n) * (REDIS_UNITS[(unit ?? '').toLowerCase()] ?? 0) >= 8 * 1024 ** 2;
  }, 'must be at least 8mb');

// It travels as a gRPC metadata value, which allows printable ASCII only; the cap keeps it far below
// the header size limit.
const internalToken = z
  .string()
  .min(32, 'must be at least 32 characters')
  .max(1024, 'must be at most 1024 characters')
  .regex(/^[\x21-\x7e]+$/, 'must be printable ASCII without spaces (it travels in gRPC metadata)');

const filePath = z.string().min(1);

const otlpProtocol = z.enum(OTLP_PROTOCOLS, {
  error: (i) =>
    `"${String(i.input)}" is not offered: Quarry exports traces over OTLP/HTTP, ${OTLP_PROTOCOLS.join(' or ')} ` +
    "(send them to the collector's HTTP port, 4318 by default)",
});

/**
 * OTEL_EXPORTER_OTLP_HEADERS and OTEL_RESOURCE_ATTRIBUTES: `key=value` pairs separated by commas, values
 * percent-encoded (OpenTelemetry's "Specifying headers via environment variables").
 */
const keyValueList = z.string().transform((raw, ctx) => {
  const out: Record<string, string> = {};
  for (const [i, item] of raw.split(',').entries()) {
    if (item.trim() === '') continue;
    const eq = item.indexOf('=');
    const key = eq > 0 ? item.slice(0, eq).trim() : '';
    let value: string | undefined;
    try {
      value = eq > 0 ? decodeURIComponent(item.slice(eq + 1).trim()) : undefined;
    } catch {
      value = undefined;
    }
    if (!key || value === undefined) {
      // Named by position, not quoted: a header's value is often a collector's API key.
      ctx.addIssue({
        code: 'custom',
        message: `item ${i + 1} is not key=value (pairs separated by commas, values percent-encoded)`,
      });
      return z.NEVER;
    }
    out[key] = value;
  }
  return out;
});

/**
 * Browser origins allowed to call the API (CORS): exact `scheme://host[:port]` values, comma-separated.
 * No wildcard: the API answers with the caller's own token, and a page on any origin must not be able to
 * drive it with a token it was handed.
 */
const originList = z
  .string()
  .transform((raw) =>
    raw
      .split(',')
      .map((o) => o.trim())
      .filter(Boolean),
  )
  .pipe(
    z.array(
      z.string().refine((o) => {
        try {
          const u = new URL(o);
          return (u.protocol === 'http:' || u.protocol === 'https:') && u.origin === o;
        } catch {
          return false;
        }
      }, 'each origin must be exactly scheme://host[:port] (http or https, no path, no trailing slash, no *)'),
    ),
  );

/** Every environment setting Quarry reads, validated once in main and passed down. */
export const envShape = {
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  // Loopback unless asked: binding every interface is an explicit choice (the image and manifests make it).
  HOST: z.string().min(1).default('127.0.0.1'),
  QUARRY_TARGET: targetList.default(() => [...TARGETS]),
  QUARRY_DATA_DIR: z.string().min(1).default('./data'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  REDIS_URL: url(['redis:', 'rediss:']).optional(),
  // The chart queue's Redis password, apart from REDIS_URL so it can come from a secret file (compose).
  REDIS_PASSWORD: z.string().min(1).optional(),
  REDIS_PASSWORD_FILE: filePath.optional(),
  REDIS_SERVER_PATH: z.string().min(1).default('redis-server'),
  MONGODB_URL: url(['mongodb:', 'mongodb+srv:']).optional(),
  MONGODB_DB: z.string().min(1).default('quarry'),
  /**
   * Which engine searches the indexes, chosen here alone (issue #28 item 7): `embedded` (DuckDB over the
   * snapshots, the default of `npm start`) or `typesense` (TYPESENSE_URL and TYPESENSE_API_KEY).
   */
  QUARRY_SEARCH_BACKEND: z
    .enum(SEARCH_BACKENDS, { error: () => `must be ${SEARCH_BACKENDS.join(' or ')}` })
    .default('embedded'),
  TYPESENSE_URL: url(['http:', 'https:']).optional(),
  TYPESENSE_API_KEY: z.string().min(1).optional(),
  CHROMIUM_PATH: z.string().min(1).default('/usr/bin/chromium'),
  QUARRY_QUERY_ADDR: hostPort.optional(),
  QUARRY_CROSSTAB_ADDR: hostPort.optional(),
  QUARRY_CHART_ADDR: hostPort.optional(),
  QUARRY_REPORTS_ADDR: hostPort.optional(),
  QUARRY_CURSOR_SECRET: z.string().min(32, 'must be at least 32 characters').optional(),
  QUARRY_CURSOR_SECRET_FILE: filePath.optional(),
  QUARRY_INTERNAL_TOKEN: internalToken.optional(),
  QUARRY_INTERNAL_TOKEN_FILE: filePath.optional(),
  QUARRY_GRPC_TLS_CERT: filePath.optional(),
  QUARRY_GRPC_TLS_KEY: filePath.optional(),
  QUARRY_GRPC_TLS_CA: filePath.optional(),
  QUARRY_GRPC_LISTEN_HOST: z.string().min(1).optional(),
  QUARRY_OPS_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  /** Where the ops port (/metrics, probes) binds: loopback unless the deployment scrapes it from outside. */
  QUARRY_OPS_HOST: z.string().min(1).default('127.0.0.1'),
  QUARRY_CORS_ORIGINS: originList.default(() => []),
  QUARRY_RATE_LIMIT: z.coerce.number().positive().max(1_000_000).optional(),
  QUARRY_RATE_BURST: z.coerce.number().int().min(0).max(1_000_000).optional(),
  /** Where the shared counters live in Redis: two deployments on one Redis need two prefixes. */
  QUARRY_RATE_LIMIT_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_.:-]{1,100}$/, 'must be 1 to 100 letters, digits or _ . : -')
    .default('quarry:rate-limit'),
  /** Calls without a valid token, per client address: requests a second (0: no limit) and the burst above it. */
  QUARRY_ANON_RATE_LIMIT: z.coerce.number().min(0).max(1_000_000).default(20),
  QUARRY_ANON_RATE_BURST: z.coerce.number().int().min(0).max(1_000_000).default(40),
  QUARRY_BODY_TIMEOUT_MS: durationMs.default(10000),
  QUARRY_EMBED_SECRET: z.string().min(32, 'must be at least 32 characters').optional(),
  QUARRY_EMBED_SECRET_FILE: filePath.optional(),
  QUARRY_EMBED_TOKENS_PER_USER: z.coerce.number().int().min(1).max(1_000_000).default(100),
  QUARRY_AUDIT_DAYS: z.coerce.number().int().min(1).max(36500).default(90),
  QUARRY_GRPC_DEADLINE_MS: durationMs.default(30000),
  QUARRY_SHUTDOWN_GRACE_MS: durationMs.default(10000),
  /** After SIGTERM, /readyz answers 503 this long before the process stops taking calls (endpoints update meanwhile). */
  QUARRY_DRAIN_DELAY_MS: z.coerce.number().int().min(0).max(600_000).default(0),
  CHART_RENDER_TIMEOUT_MS: durationMs.default(10000),
  CHART_WAIT_TIMEOUT_MS: durationMs.default(30000),
  CHART_WORKER_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(2),
  CHART_QUEUE_MAX_WAITING: z.coerce.number().int().min(1).max(100000).default(100),
  QUARRY_PRIVATE_REDIS_MAXMEMORY: redisMemory.default('256mb'),
  QUARRY_MAX_CONCURRENT_QUERIES: z.coerce.number().int().min(1).max(256).default(4),
  QUARRY_MAX_QUEUED_QUERIES: z.coerce.number().int().min(0).max(10000).default(64),
  QUARRY_HEAVY_PER_CALLER: z.coerce.number().int().min(1).max(256).default(1),
  QUARRY_TABLE_THREADS: z.coerce.number().int().min(0).max(64).optional(),
  QUARRY_CHROMIUM_IDLE_S: z.coerce.number().int().min(0).max(86400).default(300),
  QUARRY_CACHE_MB: z.coerce.number().int().min(0).max(65536).default(256),
  QUARRY_MEMORY_INDEX_MB: z.coerce.number().int().min(0).max(1048576).default(512),
  // Scheduled deliveries (REPORTS.SCHEDULE).
  QUARRY_SCHEDULE_MIN_INTERVAL_S: z.coerce.number().int().min(1).max(31_622_400).default(300),
  QUARRY_SCHEDULES_PER_USER: z.coerce.number().int().min(0).max(100_000).default(50),
  QUARRY_DELIVERIES_PER_DAY: z.coerce.number().int().min(0).max(1_000_000).default(200),
  QUARRY_RECIPIENTS_PER_DAY: z.coerce.number().int().min(0).max(1_000_000).default(200),
  /** Comma-separated host[:port] patterns (`*` in the host); empty: webhooks are refused. */
  QUARRY_WEBHOOK_ALLOW: z
    .string()
    .refine(
      (v) =>
        v
          .split(',')
          .map((p) => p.trim())
          .filter(Boolean)
          .every((p) => /^(?:[A-Za-z0-9*_-]+(?:\.[A-Za-z0-9*_-]+)*|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/.test(p)),
      'must be comma-separated host[:port] patterns (`*` allowed in the host), e.g. *.example.com,127.0.0.1:8080',
    )
    .default(''),
  /** Signs webhooks (each schedule's secret is derived from it); unset: a key kept in the data directory. */
  QUARRY_WEBHOOK_KEY: z.string().min(32, 'must be at least 32 characters').optional(),
  QUARRY_WEBHOOK_KEY_FILE: filePath.optional(),
  QUARRY_SMTP_URL: url(['smtp:', 'smtps:']).optional(),
  QUARRY_SMTP_FROM: z.string().min(3).default('Quarry <quarry@localhost>'),
  /** The first retry of a failed delivery waits this long, each next one twice as long (5 tries). */
  QUARRY_DELIVERY_BACKOFF_MS: z.coerce.number().int().min(1).max(3_600_000).default(30_000),
  QUARRY_REPORT_TRASH_DAYS: z.coerce.number().min(0).max(36500).default(30),
  // Fractions allowed: a budget of a few kilobytes is what a test of the budget needs.
  QUARRY_SNAPSHOT_KEEP_MB: z.coerce.number().min(0).max(1048576).default(1024),
  /*
   * OpenTelemetry traces, by the specification's own variable names ("Environment Variable Specification"
   * and "OTLP Exporter Configuration"): on when an endpoint is set, unless OTEL_SDK_DISABLED=true.
   */
  OTEL_SDK_DISABLED: z.string().optional(),
  OTEL_EXPORTER_OTLP_ENDPOINT: url(['http:', 'https:']).optional(),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: url(['http:', 'https:']).optional(),
  OTEL_EXPORTER_OTLP_PROTOCOL: otlpProtocol.default('http/protobuf'),
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: otlpProtocol.optional(),
  OTEL_EXPORTER_OTLP_HEADERS: keyValueList.optional(),
  OTEL_SERVICE_NAME: z.string().min(1).optional(),
  OTEL_RESOURCE_ATTRIBUTES: keyValueList.optional(),
  OTEL_TRACES_SAMPLER: z
    .enum(SAMPLERS, { error: () => `must be one of ${SAMPLERS.join(', ')}` })
    .default('parentbased_always_on'),
  OTEL_TRACES_SAMPLER_ARG: z.coerce.number().min(0).max(1).default(1),
  OTEL_BSP_SCHEDULE_DELAY: z.coerce.number().int().min(0).max(600_000).default(5000),
  OTEL_EXPORTER_OTLP_TIMEOUT: z.coerce.number().int().min(1).max(600_000).default(10000),
  // Unset: half the process's memory (its cgroup limit in a container); DuckDB spills past it.
  QUARRY_DUCKDB_MEMORY_MB: z.coerce.number().int().min(64).max(16777216).optional(),
  // Unset: a quarter of DuckDB's limit for the small versions read into memory; 0 keeps none open between calls.
  QUARRY_OPEN_INDEX_MB: z.coerce.number().int().min(0).max(16777216).optional(),
  // Unset: <data dir>/tmp when writable, else the system's temporary folder.
  QUARRY_DUCKDB_TEMP_DIR: z.string().min(1).optional(),
  // Unset: DuckDB's own cap (90 % of the free disk), which lets one big sort fill a node's disk.
  QUARRY_DUCKDB_TEMP_MAX_MB: z.coerce.number().int().min(16).max(16777216).optional(),
};

export const envSchema = z.object(envShape);

/** Rules across variables, checked on the raw values so they are reported along with per-variable ones. */
export function crossFieldProblems(env: Record<string, string | undefined>): string[] {
  const problems: string[] = [];
  const backend = env.QUARRY_SEARCH_BACKEND ?? 'embedded';
  const targets = targetList.safeParse(env.QUARRY_TARGET ?? 'all');
  // Only the query service searches; the loader (`quarry index load`) is refused by createSearchIndex.
  const searches = !targets.success || targets.data.includes('query');
  if (backend === 'typesense') {
    const missing = ['TYPESENSE_URL', 'TYPESENSE_API_KEY'].filter((name) => !env[name]);
    if (searches && missing.length > 0)
      problems.push(`${missing.join(', ')}: required when QUARRY_SEARCH_BACKEND=typesense`);
  } else if (env.TYPESENSE_URL) {
    // The backend was once chosen by which variables were set; a leftover TYPESENSE_URL now says the
    // operator meant Typesense, and serving or loading the embedded engine instead would split the data.
    problems.push(
      `TYPESENSE_URL: is set, but QUARRY_SEARCH_BACKEND is ${env.QUARRY_SEARCH_BACKEND ? backend : 'unset (embedded)'}; ` +
        'set QUARRY_SEARCH_BACKEND=typesense to search with Typesense, or unset TYPESENSE_URL',
    );
  }
  if (env.REDIS_PASSWORD !== undefined) {
    if (!env.REDIS_URL)
      problems.push('REDIS_PASSWORD: is set without REDIS_URL (the private redis-server makes its own password)');
    else if (/^rediss?:\/\/[^/@]*:[^/@]+@/.test(env.REDIS_URL))
      problems.push('REDIS_PASSWORD: REDIS_URL carries a password already; give it in one place');
  }
  if (env.QUARRY_RATE_BURST !== undefined && env.QUARRY_RATE_LIMIT === undefined)
    problems.push('QUARRY_RATE_BURST: needs QUARRY_RATE_LIMIT (the rate the burst is above)');
  const tls = TLS_VARS.filter((name) => env[name]);
  if (tls.length > 0 && tls.length < TLS_VARS.length) {
    const missing = TLS_VARS.filter((name) => !env[name]);
    problems.push(`${missing.join(', ')}: required when ${tls.join(', ')} is set (all three or none)`);
  }
  // An unparsable target list is reported by the schema; the rule needs the parsed list.
  if (
    targets.success &&
    needsInternalToken(targets.data) &&
    env.QUARRY_INTERNAL_TOKEN === undefined &&
    env.QUARRY_INTERNAL_TOKEN_FILE === undefined
  ) {
    problems.push(
      `QUARRY_INTERNAL_TOKEN: is required when the gateway and the services run in different processes (QUARRY_TARGET=${targets.data.join(',')}); ` +
        'give every process of the deployment the same value of 32 or more characters (e.g. openssl rand -base64 32), or QUARRY_INTERNAL_TOKEN_FILE',
    );
  }
  return problems;
}

export const TLS_VARS = ['QUARRY_GRPC_TLS_CERT', 'QUARRY_GRPC_TLS_KEY', 'QUARRY_GRPC_TLS_CA'] as const;

/** The targets that speak gRPC: the gateway as client, the services as servers (chart-worker uses Redis). */
const GRPC_PARTIES: readonly Target[] = ['gateway', 'query', 'crosstab', 'chart', 'reports'];

/**
 * Whether this process talks gRPC to another process: it runs some of the gRPC parties but not all.
 * Only then must the credential be shared; all in one process can make up its own.
 */
export function needsInternalToken(targets: readonly Target[]): boolean {
  const here = GRPC_PARTIES.filter((t) => targets.includes(t));
  return here.length > 0 && here.length < GRPC_PARTIES.length;
}

export type Env = z.output<typeof envSchema>;

/** Names the schema knows: the deployment manifests are checked against this list. */
export const KNOWN_ENV_VARS: readonly string[] = Object.keys(envShape);
