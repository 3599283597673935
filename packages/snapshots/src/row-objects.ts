import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { JSDuckDBValueConverter, type DuckDBMaterializedResult } from '@duckdb/node-api';
import type { Row } from './snapshot-types';

/**
 * The rows as plain JS objects, as DuckDB's getRowObjectsJS() makes them, one chunk (2,048 rows) at a
 * time with a turn of the event loop between chunks: converting a big pivot's rows at once held the
 * service's loop, and every other call on it waited (bench/fairness.bench.js).
 */
export async function rowObjects(result: DuckDBMaterializedResult): Promise<Row[]> {
  const names = result.deduplicatedColumnNames();
  const rows: Row[] = [];
  for (let i = 0; i < result.chunkCount; i++) {
    if (i > 0) await yieldToLoop();
    const chunk = result.getChunk(i);
    for (let r = 0; r < chunk.rowCount; r++) {
      const row: Row = {};
      chunk.visitRowValues(r, (value, _r, column, type) => {
        row[names[column]] = JSDuckDBValueConverter(value, type, JSDuckDBValueConverter);
      });
      rows.push(row);
    }
  }
  return rows;
}
