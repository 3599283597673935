import { z } from 'zod';
import { setting, settingGroup, type Reader } from '../setting';

const ENGINES: Reader[] = ['query', 'crosstab'];
const DUCKDB: Reader[] = ['query', 'crosstab', 'CLI'];

export const heavyCallSettings = settingGroup('Heavy calls, memory and disk', {
  QUARRY_MAX_CONCURRENT_QUERIES: setting(z.coerce.number().int().min(1).max(256).default(4), {
    doc: 'searches and crosstabs one process runs at once (query and crosstab hosted together share it)',
    readBy: ENGINES,
  }),
  QUARRY_MAX_QUEUED_QUERIES: setting(z.coerce.number().int().min(0).max(10000).default(64), {
    doc: 'how many more may wait for a slot; beyond that a call is refused at once with 503 and `Retry-After: 1`',
    readBy: ENGINES,
  }),
  QUARRY_HEAVY_PER_CALLER: setting(z.coerce.number().int().min(1).max(256).default(1), {
    doc:
      'fair admission: heavy calls (searches, crosstabs) one caller (user) runs at once in a process, and charts ' +
      'one caller has in the chart queue at once; the next free slot goes round robin to the caller served ' +
      "longest ago, so one caller's queue of big calls never holds back another's small one",
    readBy: [...ENGINES, 'chart'],
  }),
  QUARRY_TABLE_THREADS: setting(z.coerce.number().int().min(0).max(64).optional(), {
    doc:
      "threads that build and render tables of 5,000+ groups off the crosstab service's event loop (`0`: on " +
      'the loop)',
    default: '`QUARRY_MAX_CONCURRENT_QUERIES`, at most the cores less one',
    readBy: ['crosstab'],
  }),
  QUARRY_CACHE_MB: setting(z.coerce.number().int().min(0).max(65536).default(256), {
    doc:
      'per process (query and crosstab hosted together share it): MiB of `QUERIES.EXECUTE` and ' +
      "`CROSSTAB.EXECUTE` results kept in an LRU, keyed by index version, the caller's realms and the params; " +
      '`0` turns it off. A result larger than a quarter of it is not kept. `meta.cache` says `hit`, `miss` or ' +
      '`bypass` (param `cache: false`, or the cache is off)',
    readBy: ENGINES,
  }),
  QUARRY_MEMORY_INDEX_MB: setting(z.coerce.number().int().min(0).max(1048576).default(512), {
    doc:
      'per query service on the embedded engine: MiB (estimated) for indexes of up to 100,000 records held in ' +
      'memory and searched there without SQL (same answers; `bench/in-memory-search.bench.js`). A version is ' +
      'read in the background on its first search, which SQL answers meanwhile; the least recently searched go ' +
      'first when it is full. `0` keeps every search on DuckDB',
    readBy: ['query'],
  }),
  QUARRY_DUCKDB_MEMORY_MB: setting(z.coerce.number().int().min(64).max(16777216).optional(), {
    doc:
      "per process: DuckDB's memory limit. Past it joins, aggregates and sorts spill to `QUARRY_DUCKDB_TEMP_DIR` " +
      "instead of the process growing (DuckDB's own default, 80 % of the machine's RAM, ignores the container)",
    default: "half the process's memory (its cgroup limit in a container, else the machine's), at least 128",
    readBy: DUCKDB,
  }),
  QUARRY_EXPORT_MEMORY_MB: setting(z.coerce.number().int().min(64).max(1_048_576).default(192), {
    doc:
      'per query service: the memory limit of the DuckDB that writes search exports (`EXPORTS.START`), one of ' +
      "its own, apart from the searches' and crosstabs' (`QUARRY_DUCKDB_MEMORY_MB`): an export's sort spills " +
      'to its own folder under `QUARRY_DUCKDB_TEMP_DIR` past it, so the process does not grow with the rows ' +
      'exported (`bench/export.bench.js --ten-million`)',
    readBy: ['query'],
  }),
  QUARRY_DUCKDB_TEMP_DIR: setting(z.string().min(1).optional(), {
    doc:
      'where DuckDB spills; each process uses a folder of its own there and removes it on exit. Deployments ' +
      'mount the snapshots read-only: k8s sets `/tmp` (a disk-backed emptyDir), compose `/spill` (a volume)',
    default: "`<data dir>/tmp` when writable, else the system's temporary folder",
    readBy: DUCKDB,
  }),
  // DuckDB's own cap lets one big sort fill a node's disk.
  QUARRY_DUCKDB_TEMP_MAX_MB: setting(z.coerce.number().int().min(16).max(16777216).optional(), {
    doc:
      'per DuckDB: the most it spills (`max_temp_directory_size`); a call that needs more fails alone ' +
      "instead of filling the disk. The query service's exports have a DuckDB of their own with the same cap. " +
      "Deployments set it below their spill volume's `sizeLimit`",
    default: "DuckDB's own (90 % of the free disk)",
    readBy: DUCKDB,
  }),
  QUARRY_OPEN_INDEX_MB: setting(z.coerce.number().int().min(0).max(16777216).optional(), {
    doc:
      'per process: what the small index versions read into memory may hold together; the least recently used ' +
      'are let go (and read in again when next used). Versions of 500,000 records or more are written in ' +
      "DuckDB's format at load and attached read-only, holding nothing of their own (docs/scaling.md)",
    default: "a quarter of DuckDB's limit",
    readBy: DUCKDB,
  }),
});
