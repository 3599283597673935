import fs from 'node:fs';
import { DuckDBInstance } from '@duckdb/node-api';
import type { SnapshotEngineOptions } from './snapshot-types';

/** The engine's one in-process DuckDB, with the threads, memory limit and spill folder it was given. */
export async function createEngineInstance(o: SnapshotEngineOptions): Promise<DuckDBInstance> {
  if (o.tempDirectory) fs.mkdirSync(o.tempDirectory, { recursive: true, mode: 0o700 });
  const instance = await DuckDBInstance.create(':memory:', {
    threads: String(o.threads ?? 2),
    preserve_insertion_order: 'true',
    ...(o.memoryLimitBytes ? { memory_limit: `${Math.floor(o.memoryLimitBytes / 1024 / 1024)}MiB` } : {}),
    ...(o.tempDirectory !== undefined ? { temp_directory: o.tempDirectory } : {}),
  });
  if (o.maxTempBytes !== undefined) {
    // Set once the instance exists: given at creation, DuckDB 1.5 reports the cap but does not enforce it.
    const c = await instance.connect();
    try {
      await c.run(`SET GLOBAL max_temp_directory_size = '${Math.floor(o.maxTempBytes / 1024 / 1024)}MiB'`);
    } finally {
      c.closeSync();
    }
  }
  return instance;
}
