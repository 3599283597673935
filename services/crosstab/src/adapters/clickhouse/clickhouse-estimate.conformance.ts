import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { IndexEntry } from '@quarry/metadata-store';
import { parseQuery, type FieldDef } from '@quarry/query-language';
import { builtEntry } from '@quarry/testkit';
import { crosstabSpec } from '../../domain/crosstab-spec';
import { crosstabInput } from '../../../test-support/crosstab-input';
import { KEY_SAMPLE_RECORDS } from '../pivot/pivot-key-estimate';
import type { OpenedPivotEngine } from '../pivot/pivot-engine.conformance';

/** Records sorted by station: the first 120,000 all at S0000, then 2,000 stations of 65 records each. */
function sortedRecords(): Array<{ station: string; region: string; n: number }> {
  const out = Array.from({ length: 120_000 }, (_, i) => ({ station: 'S0000', region: 'R0', n: i % 7 }));
  for (let s = 1; s <= 2000; s++)
    for (let j = 0; j < 65; j++)
      out.push({ station: `S${String(s).padStart(4, '0')}`, region: `R${s % 5}`, n: (s + j) % 7 });
  return out;
}

/**
 * The cell-limit estimate of a ClickHouse engine on a file sorted by the axis key, whose first records
 * see one key: the subset is spread over the whole file, so the bound stays a lower bound (never more
 * keys than there are) and comes close to the truth, where the first 100,000 records would see one key.
 */
export function keyEstimateConformance(
  name: string,
  open: (dir: string, entry: IndexEntry) => Promise<OpenedPivotEngine>,
): void {
  describe(`${name}: the cell-limit estimate over a file sorted by its key`, () => {
    const records = sortedRecords();
    let dir: string;
    let entry: IndexEntry;
    let opened: OpenedPivotEngine;

    beforeAll(async () => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'q-ch-estimate-'));
      const file = path.join(dir, 'sorted.json');
      fs.writeFileSync(file, JSON.stringify(records));
      entry = await builtEntry({ name: 'sorted', file, dataDir: dir, types: {}, views: [] });
      opened = await open(dir, entry);
    }, 120000);

    afterAll(async () => {
      await opened?.close();
      fs.rmSync(dir, { recursive: true, force: true });
    });

    const query = (q: string) => parseQuery(q, { fields: entry.fields as FieldDef[], now: Date.now() });
    const specOf = (rows: string[], columns: string[] = []) =>
      crosstabSpec(
        entry,
        crosstabInput({
          rows,
          columns: columns.map((field) => ({ field, reverse: false })),
          totals: [{ aggregationType: 'Count', field: '', dynamicView: '', name: 'n' }],
        }),
      );

    it('the first records see one station of 2,001: the estimate sees nearly all, never more', async () => {
      expect(records.length).toBeGreaterThan(2 * KEY_SAMPLE_RECORDS);
      const stations = new Set(records.map((r) => r.station)).size;
      // What a subset of the first records would have seen.
      expect(new Set(records.slice(0, KEY_SAMPLE_RECORDS).map((r) => r.station)).size).toBe(1);
      const least = await opened.pivots.keysAtLeast(entry, query('*'), specOf(['station']));
      expect(least.rows).toBeLessThanOrEqual(stations);
      expect(least.rows).toBeGreaterThanOrEqual(0.95 * stations);
      expect(least.outerRows).toBe(least.rows);
    });

    it('stations by region under a filter: lower bounds of both axes and of the pairs, close to the truth', async () => {
      const kept = records.filter((r) => r.n <= 3);
      const truth = {
        pairs: new Set(kept.map((r) => `${r.station}|${r.region}`)).size,
        stations: new Set(kept.map((r) => r.station)).size,
        regions: new Set(kept.map((r) => r.region)).size,
      };
      const least = await opened.pivots.keysAtLeast(entry, query('n:[0 TO 3]'), specOf(['region', 'station'], ['n']));
      expect(least.rows).toBeLessThanOrEqual(truth.pairs);
      expect(least.rows).toBeGreaterThanOrEqual(0.9 * truth.pairs);
      expect(least.outerRows).toBe(truth.regions);
      expect(least.columns).toBe(4);
    });
  });
}
