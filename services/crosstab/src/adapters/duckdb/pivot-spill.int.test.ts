import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import type { IndexEntry } from '@quarry/metadata-store';
import { parseQuery, type FieldDef } from '@quarry/query-language';
import { buildSnapshot, SnapshotEngine } from '@quarry/snapshots';
import { crosstabSpec, MAX_CELLS } from '../../domain/crosstab-spec';
import { crosstabInput } from '../../../test-support/crosstab-input';
import { DuckDbPivotEngine } from './duckdb-pivot-engine.adapter';

const RECORDS = 2_000_000;
const GROUPS = 40;
const LIMIT = 64 * 1024 * 1024;

/**
 * With a memory limit smaller than a crosstab needs, the crosstab completes by
 * spilling to the engine's temporary folder. The distinct count of 2M unique ids per group materialises
 * 2M (group, id) pairs, well over 64 MB; without a temporary folder the same crosstab runs out of memory,
 * which shows it is larger than the limit.
 */
describe('a crosstab larger than DuckDB memory limit', () => {
  let dir: string;
  let entry: IndexEntry;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'q-spill-'));
    const source = path.join(dir, 'ids.parquet');
    const db = await DuckDBInstance.create(':memory:');
    const c = await db.connect();
    await c.run(
      `COPY (SELECT 'g' || (i % ${GROUPS}) AS grp, 'id-' || i AS id, i % 1000 AS v FROM range(${RECORDS}) t(i)) TO '${source}' (FORMAT parquet)`,
    );
    c.closeSync();
    db.closeSync();
    const views = [{ name: 'Ids', field: 'id' }];
    const built = await buildSnapshot({
      name: 'ids',
      file: source,
      dataDir: dir,
      types: {},
      views,
      attachMinRecords: 0,
    });
    entry = {
      name: 'ids',
      description: '',
      fields: built.fields,
      views,
      recordCount: built.recordCount,
      version: 1,
      snapshot: built.snapshot,
      updatedAt: '',
    };
  }, 120_000);

  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  const run = async (tempDirectory: string, maxTempBytes?: number) => {
    const engine = new SnapshotEngine(dir, { memoryLimitBytes: LIMIT, tempDirectory, maxTempBytes, threads: 2 });
    try {
      const spec = crosstabSpec(
        entry,
        crosstabInput({
          rows: ['grp'],
          totals: [
            { aggregationType: 'Count', field: '', dynamicView: 'Ids', name: 'ids' },
            { aggregationType: 'Sum', field: 'v', dynamicView: '', name: 'v' },
          ],
        }),
      );
      const where = parseQuery('*', { fields: entry.fields as FieldDef[], now: Date.now() });
      const [limit] = await engine.all(`SELECT current_setting('memory_limit') AS m`);
      expect(String(limit.m)).toMatch(/^6[0-9](\.\d+)? MiB$/);
      return await new DuckDbPivotEngine(engine).pivot(entry, where, spec, MAX_CELLS);
    } finally {
      await engine.close();
    }
  };

  it('completes by spilling to the temporary folder, with exact totals', async () => {
    const spill = path.join(dir, 'tmp', 'engine');
    const result = await run(spill);
    const grand = result.groups.find((g) => g.rowKey.length === 0);
    expect(grand?.values).toEqual([RECORDS, (RECORDS / 1000) * (999 * 500)]);
    const g7 = result.groups.find((g) => g.rowKey[0] === 'g7');
    expect(g7?.values[0]).toBe(RECORDS / GROUPS);
    expect(result.keys.rows).toBe(GROUPS);
    // The engine removes its own spill folder when it closes.
    expect(fs.existsSync(spill)).toBe(false);
  }, 120_000);

  it('runs out of memory without one: the crosstab is larger than the limit', async () => {
    await expect(run('')).rejects.toThrow(/Out of Memory/i);
  }, 120_000);

  it('fails alone, without filling the disk, when it would spill more than QUARRY_DUCKDB_TEMP_MAX_MB', async () => {
    const spill = path.join(dir, 'tmp', 'capped');
    await expect(run(spill, 1024 * 1024)).rejects.toThrow(/max_temp_directory_size/);
  }, 120_000);
});
