import { z } from 'zod';
import { partOf, setting, settingGroup, type Reader } from '../setting';
import { filePath, PIVOT_ENGINES, redisMemory, SEARCH_BACKENDS, url } from '../setting-rules';

const METADATA: Reader[] = ['gateway', 'query', 'crosstab', 'reports', 'CLI'];
const REDIS: Reader[] = ['gateway', 'scheduler', 'chart', 'chart-worker', 'ingest'];

export const storeSettings = settingGroup('Stores and search', {
  MONGODB_URL: setting(url(['mongodb:', 'mongodb+srv:']).optional(), {
    doc: 'MongoDB metadata store instead of SQLite',
    readBy: METADATA,
  }),
  MONGODB_DB: partOf('MONGODB_URL', z.string().min(1).default('quarry'), { readBy: METADATA }),
  // Chosen here alone: `embedded` (DuckDB over the snapshots, the default of `npm start`) or `typesense`.
  QUARRY_SEARCH_BACKEND: setting(
    z.enum(SEARCH_BACKENDS, { error: () => `must be ${SEARCH_BACKENDS.join(' or ')}` }).default('embedded'),
    {
      doc:
        "the one search engine: `embedded` (DuckDB over the snapshots) or `typesense`; a data directory's first " +
        'load records it (`search-backend`) and a load or query service on the other one is refused',
      readBy: ['query', 'CLI'],
    },
  ),
  TYPESENSE_URL: setting(url(['http:', 'https:']).optional(), {
    doc:
      "Typesense's address and key, with `QUARRY_SEARCH_BACKEND=typesense` only (a URL with the embedded " +
      'backend is refused)',
    readBy: ['query', 'CLI'],
  }),
  TYPESENSE_API_KEY: partOf('TYPESENSE_URL', z.string().min(1).optional(), { readBy: ['query', 'CLI'] }),
  QUARRY_PIVOT_ENGINE: setting(
    z.enum(PIVOT_ENGINES, { error: () => `must be ${PIVOT_ENGINES.join(' or ')}` }).default('duckdb'),
    {
      doc:
        'the crosstab engine: `duckdb` (over the snapshots) or `clickhouse` (a ClickHouse server or cluster at ' +
        '`CLICKHOUSE_URL`, else ClickHouse in-process through the optional `chdb` package over the snapshots)',
      readBy: ['crosstab', 'CLI'],
    },
  ),
  CLICKHOUSE_URL: setting(url(['http:', 'https:']).optional(), {
    doc:
      'the ClickHouse server or cluster of `QUARRY_PIVOT_ENGINE=clickhouse` (HTTP interface; user and password ' +
      'in the URL); unset: chDB in-process. `quarry index load` copies each version into it before publishing, and drops the versions it prunes',
    readBy: ['crosstab', 'CLI'],
  }),
  CLICKHOUSE_DATABASE: partOf('CLICKHOUSE_URL', z.string().regex(/^\w+$/).default('quarry'), {
    readBy: ['crosstab', 'CLI'],
  }),
  CLICKHOUSE_CLUSTER: partOf(
    'CLICKHOUSE_URL',
    z
      .string()
      .regex(/^[\w.-]+$/)
      .optional(),
    { readBy: ['crosstab', 'CLI'] },
  ),
  REDIS_URL: setting(url(['redis:', 'rediss:']).optional(), {
    doc:
      'chart queue, schedules and shared rate limits Redis (unset: a private `redis-server` when chart and ' +
      'chart-worker share the process, or beside the gateway; it keeps an append-only file in ' +
      '`QUARRY_DATA_DIR/redis`, so a restart loses no schedule). Your own Redis must persist too (AOF)',
    readBy: REDIS,
  }),
  // Apart from REDIS_URL so it can come from a secret file (compose).
  REDIS_PASSWORD: setting(z.string().min(1).optional(), {
    doc:
      "the chart queue Redis's password, put into `REDIS_URL` (or read from a file, as compose does); refused " +
      'beside a URL that carries one. The private `redis-server` makes a random one per start, given on its ' +
      'standard input, never on a command line',
    readBy: REDIS,
  }),
  REDIS_PASSWORD_FILE: partOf('REDIS_PASSWORD', filePath.optional(), { readBy: REDIS }),
  REDIS_SERVER_PATH: setting(z.string().min(1).default('redis-server'), {
    doc: 'binary for the private Redis',
    readBy: ['gateway', 'chart'],
  }),
  QUARRY_PRIVATE_REDIS_MAXMEMORY: setting(redisMemory.default('256mb'), {
    doc:
      'memory cap of the private Redis (`--maxmemory`, redis-server notation, ≥ 8mb), with `noeviction`: when ' +
      'full, new charts are refused with 503 and `Retry-After` instead of keys being dropped. Set the same on ' +
      'your own Redis with `REDIS_URL`',
    readBy: ['gateway', 'chart'],
  }),
  QUARRY_REPORT_TRASH_DAYS: setting(z.coerce.number().min(0).max(36500).default(30), {
    doc:
      'days a report deleted with REPORTS.DELETE can be brought back (`quarry report restore`); older ones are ' +
      'purged',
    readBy: ['reports', 'CLI'],
  }),
  // Fractions allowed: a budget of a few kilobytes is what a test of the budget needs.
  QUARRY_SNAPSHOT_KEEP_MB: setting(z.coerce.number().min(0).max(1048576).default(1024), {
    doc:
      'MiB of earlier index loads kept because saved reports were saved on them (`asOf: "saved"`), newest first; ' +
      'read by `quarry index load`, which also always keeps the current and previous loads. Fractions allowed',
    readBy: ['CLI'],
  }),
});
