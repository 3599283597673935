import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';

export async function rows(c: DuckDBConnection, sql: string): Promise<Array<Record<string, unknown>>> {
  return (await c.runAndReadAll(sql)).getRowObjectsJS() as Array<Record<string, unknown>>;
}

export function duckMessage(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).split('\n')[0].slice(0, 300);
}

/**
 * Runs one statement on DuckDB's own threads (driving it task by task from JS would run it on one),
 * reading its progress (for a file scan, the share of its bytes read) a few times a second.
 */
export async function runWithProgress(
  c: DuckDBConnection,
  sql: string,
  onProgress?: (f: number) => void,
): Promise<Array<Record<string, unknown>>> {
  const timer = onProgress
    ? setInterval(() => {
        const p = c.progress.percentage;
        if (p >= 0) onProgress(Math.min(p / 100, 1));
      }, 100)
    : undefined;
  try {
    const result = (await c.runAndReadAll(sql)).getRowObjectsJS() as Array<Record<string, unknown>>;
    onProgress?.(1);
    return result;
  } finally {
    if (timer) clearInterval(timer);
  }
}

/** Progress over several passes, each a share of the whole. */
export function phases(onProgress: ((f: number) => void) | undefined, weights: Record<string, number>) {
  const total = Object.values(weights).reduce((a, b) => a + b, 0);
  const done = new Map<string, number>();
  let last = 0;
  return (phase: string) => (f: number) => {
    done.set(phase, f * (weights[phase] ?? 0));
    const now = [...done.values()].reduce((a, b) => a + b, 0) / total;
    if (now >= last) {
      last = now;
      onProgress?.(Math.min(now, 1));
    }
  };
}

/** The in-memory DuckDB a load runs in, with progress reporting on and spilling to `spill`. */
export async function openLoadDuckDb(spill: string): Promise<{ instance: DuckDBInstance; c: DuckDBConnection }> {
  const instance = await DuckDBInstance.create(':memory:', {
    preserve_insertion_order: 'true',
    // A load streams: a file larger than memory spills here instead of growing the process.
    memory_limit: '512MB',
    temp_directory: spill,
  });
  const c = await instance.connect();
  // Progress is read between tasks (runWithProgress), never printed by DuckDB itself.
  await c.run('SET enable_progress_bar = true; SET enable_progress_bar_print = false; SET progress_bar_time = 0');
  // A time without a zone is the wall time written: read through UTC, whatever zone the server runs in
  // (DuckDB takes the machine's by default, and a load under TZ=America/New_York stored 04:05 as 09:05).
  await c.run("SET TimeZone = 'UTC'");
  return { instance, c };
}
