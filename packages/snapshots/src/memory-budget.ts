import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** cgroup v2 and v1 files holding the container's memory limit ("max" or a huge number: none). */
const CGROUP_LIMIT_FILES = ['/sys/fs/cgroup/memory.max', '/sys/fs/cgroup/memory/memory.limit_in_bytes'];

/**
 * The memory this process may use: the container's cgroup limit when there is one, else the machine's.
 * DuckDB's own default (80 % of the machine's RAM) ignores the cgroup, so in a pod of 4 GiB on a 64 GiB
 * node it would plan for 51 GiB and be OOM-killed instead of spilling (DuckDB
 * "Configuration: memory_limit"; the kernel's cgroup-v2 memory.max).
 */
export function processMemoryBytes(readFile: (file: string) => string = (f) => fs.readFileSync(f, 'utf8')): number {
  const machine = os.totalmem();
  for (const file of CGROUP_LIMIT_FILES) {
    let text: string;
    try {
      text = readFile(file).trim();
    } catch {
      continue;
    }
    const limit = Number(text);
    if (text !== 'max' && Number.isFinite(limit) && limit > 0) return Math.min(limit, machine);
  }
  return machine;
}

/**
 * DuckDB's share of the process budget when none is configured: half of it, leaving the rest to Node's
 * heap, the result cache, in-memory search and (in `all`) Chromium; never below DuckDB's working
 * minimum of 128 MiB.
 */
export function defaultDuckDbMemoryBytes(processBytes: number = processMemoryBytes()): number {
  return Math.max(128 * 1024 * 1024, Math.floor(processBytes / 2));
}

/** What a process's snapshot engine is given, from its config. */
export function engineOptions(config: {
  dataDir: string;
  duckdbMemoryBytes: number | undefined;
  openIndexBytes: number | undefined;
  duckdbTempDir?: string | undefined;
  duckdbTempMaxBytes?: number | undefined;
}): { memoryLimitBytes: number; tempDirectory: string; maxTempBytes: number | undefined; indexBudgetBytes: number } {
  const memoryLimitBytes = config.duckdbMemoryBytes ?? defaultDuckDbMemoryBytes();
  return {
    memoryLimitBytes,
    // One folder per engine: DuckDB names its spill files per instance only, several processes may share
    // the volume, and the engine removes its own. Never DuckDB's default (under the working directory,
    // read-only in every Deployment).
    tempDirectory: path.join(spillRoot(config), `duckdb-${process.pid}-${randomBytes(3).toString('hex')}`),
    // Below the spill volume's size: a sort that needs more fails alone instead of filling the node's disk.
    maxTempBytes: config.duckdbTempMaxBytes,
    indexBudgetBytes: config.openIndexBytes ?? Math.floor(memoryLimitBytes / 4),
  };
}

/**
 * The query service's export DuckDB: an instance of its own, so an export's sort is bounded by its own
 * limit (QUARRY_EXPORT_MEMORY_MB) and spills to its own folder past it, whatever the searches' and
 * crosstabs' limit is. DuckDB's default limit is a share of the machine's memory, and a sorted COPY holds
 * every row until it is sorted: under that limit the process grew with the rows exported.
 */
export function exportEngineOptions(config: {
  dataDir: string;
  exportMemoryBytes: number;
  duckdbTempDir?: string | undefined;
  duckdbTempMaxBytes?: number | undefined;
}): { memoryLimitBytes: number; tempDirectory: string; maxTempBytes: number | undefined; indexBudgetBytes: number } {
  return {
    memoryLimitBytes: config.exportMemoryBytes,
    tempDirectory: path.join(spillRoot(config), `export-${process.pid}-${randomBytes(3).toString('hex')}`),
    maxTempBytes: config.duckdbTempMaxBytes,
    // Small versions read into memory for an export are let go first: the budget is the sort's.
    indexBudgetBytes: Math.floor(config.exportMemoryBytes / 4),
  };
}

/**
 * QUARRY_DUCKDB_TEMP_DIR, else the data volume's tmp folder where this process may write (the embedded
 * `all` process, the loader), else the system's temporary folder (a Deployment mounts the snapshots
 * read-only; its /tmp is a disk-backed emptyDir).
 */
function spillRoot(config: { dataDir: string; duckdbTempDir?: string | undefined }): string {
  if (config.duckdbTempDir) return config.duckdbTempDir;
  const onData = path.join(config.dataDir, 'tmp');
  try {
    // Not recursive: the data directory exists or nothing here is ours to create (a recursive mkdir under
    // /proc never returned).
    if (!fs.existsSync(onData)) fs.mkdirSync(onData, { mode: 0o700 });
    fs.accessSync(onData, fs.constants.W_OK);
    return onData;
  } catch {
    return os.tmpdir();
  }
}
