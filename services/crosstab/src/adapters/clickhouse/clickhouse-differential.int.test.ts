import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { DATE_GROUPS } from '@quarry/contract';
import type { IndexEntry } from '@quarry/metadata-store';
import { parseQuery, type FieldDef } from '@quarry/query-language';
import { SnapshotEngine } from '@quarry/snapshots';
import { builtEntry } from '@quarry/testkit';
import type { GroupRow } from '../../domain/axis-value';
import { BIGS, expectSame, VIEWS, writeRecords } from '../../../test-support/clickhouse-adversarial';
import { crosstabSpec, MAX_CELLS } from '../../domain/crosstab-spec';
import { crosstabInput, type SentCrosstab } from '../../../test-support/crosstab-input';
import { DuckDbPivotEngine } from '../duckdb/duckdb-pivot-engine.adapter';
import { ChdbRunner } from './chdb-runner';
import { ClickHousePivotEngine } from './clickhouse-pivot-engine.adapter';

describe('DuckDB and ClickHouse adapters, differential, on adversarial records', () => {
  let dir: string;
  let entry: IndexEntry;
  let engine: SnapshotEngine;
  let duck: DuckDbPivotEngine;
  let ch: ClickHousePivotEngine;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'q-ch-diff-'));
    const file = path.join(dir, 'adv.jsonl');
    writeRecords(file, 3000);
    entry = await builtEntry({ name: 'adv', file, dataDir: dir, types: {}, grains: {}, views: VIEWS });
    engine = new SnapshotEngine(dir);
    duck = new DuckDbPivotEngine(engine);
    ch = new ClickHousePivotEngine(new ChdbRunner(dir));
  }, 120000);

  afterAll(async () => {
    await engine?.close();
    await ch?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('loads the types the cases rely on', () => {
    const types = Object.fromEntries(entry.fields.map((f) => [f.name, f.type]));
    expect(types).toEqual({
      k: 'string',
      g: 'string',
      at: 'date',
      day: 'date',
      big: 'integer',
      dec: 'number',
      n: 'integer',
      flag: 'boolean',
    });
  });

  const ZONES = ['UTC', 'America/New_York', 'Europe/Paris', 'Australia/Lord_Howe', 'Asia/Kathmandu'];
  const axis = fc.oneof(
    // `big` as a plain axis has its own test below: DuckDB's median path keeps 2^62 and 2^62 + 1 apart.
    fc.constantFrom('k', 'g', 'n', 'dec', 'flag', 'day', 'at').map((field) => ({ field })),
    fc.record({ field: fc.constantFrom('at', 'day'), dateGroup: fc.constantFrom(...DATE_GROUPS) }),
    fc.record({
      field: fc.constantFrom('n', 'dec', 'big'),
      bin: fc.constantFrom({ width: 5, origin: 0 }, { width: 0.1, origin: 0.05 }, { width: 1e18, origin: -1e18 }),
    }),
  );
  const total = fc.oneof(
    fc.constant({ aggregationType: 'Count' }),
    fc.record({
      aggregationType: fc.constantFrom('Count', 'Sum', 'Average', 'Min', 'Max', 'Median', 'StdDev'),
      field: fc.constantFrom('big', 'dec', 'n'),
    }),
    fc.record({
      aggregationType: fc.constant('Percentile'),
      field: fc.constantFrom('big', 'dec'),
      percentile: fc.constantFrom(1, 90, 99.5),
    }),
    fc.record({ aggregationType: fc.constant('Count'), dynamicView: fc.constantFrom('Keys', 'Days', 'Bigs') }),
  );

  it('random crosstabs (axes, date groups in five zones, bins, every aggregation, subtotals, filters, kept outer keys) agree', async () => {
    const filters = ['*', 'big:>7', 'k:paulo OR k:é', 'NOT g:x', 'at:[2024-03-10 TO 2024-11-04}', 'dec:[0 TO 1]'];
    await fc.assert(
      fc.asyncProperty(
        fc.array(axis, { minLength: 1, maxLength: 2 }),
        fc.array(axis, { maxLength: 2 }),
        fc.array(total, { minLength: 1, maxLength: 3 }),
        fc.constantFrom(...ZONES),
        fc.boolean(),
        fc.constantFrom(...filters),
        async (rows, columns, totals, timeZone, subtotals, q) => {
          const sent = {
            rows,
            columns: columns.map((c) => ({ ...c, reverse: false })),
            totals: totals.map((t, i) => ({ ...t, name: `t${i}` })),
            timeZone,
            subtotals,
          } as unknown as SentCrosstab;
          const spec = crosstabSpec(entry, crosstabInput(sent));
          const where = parseQuery(q, { fields: entry.fields as FieldDef[], now: Date.now() });
          const what = JSON.stringify({ ...sent, q });
          // A refusal (a bin too fine for the data) must be the same refusal.
          const run = (e: DuckDbPivotEngine | ClickHousePivotEngine, restrict?: { rows: GroupRow['rowKey'] }) =>
            e.pivot(entry, where, spec, MAX_CELLS, undefined, restrict).then(
              (r) => ({ r }),
              // Which too-fine bin (and axis) it names depends on the order groups come in.
              (err: Error) => ({
                error: err.message
                  .replace(/bin number -?\d+/, 'bin number N')
                  .replace(/^\w+\[\d\]\.bin: width [\d.]+ from origin [\d.]+/, 'bin'),
              }),
            );
          const a = await run(duck);
          const b = await run(ch);
          if (!('r' in a) || !('r' in b)) {
            expect({ what, got: b }).toEqual({ what, got: a });
            return;
          }
          expectSame(a.r, b.r, totals, what);
          // The outer keys a rowLimit keeps: the first two row keys (a blank among them, when there is one).
          const outer = [...new Set(a.r.groups.filter((g) => g.rowKey.length === 1).map((g) => g.rowKey[0]))].slice(
            0,
            2,
          );
          if (outer.length) {
            const [ka, kb] = [await run(duck, { rows: outer }), await run(ch, { rows: outer })];
            if ('r' in ka && 'r' in kb) expectSame(ka.r, kb.r, totals, `${what} kept ${JSON.stringify(outer)}`);
            else expect(kb).toEqual(ka);
          }
        },
      ),
      { numRuns: 200, seed: 4545 },
    );
  }, 300000);

  it('an integer axis past 2^53: keys one double stands for are one key, as DuckDB rolls them up', async () => {
    const spec = crosstabSpec(
      entry,
      crosstabInput({
        rows: ['big'],
        columns: [{ field: 'g', reverse: false }],
        totals: [
          { aggregationType: 'Count', name: 'n' },
          { aggregationType: 'Sum', field: 'big', name: 's' },
        ],
      } as unknown as SentCrosstab),
    );
    const where = parseQuery('*', { fields: entry.fields as FieldDef[], now: Date.now() });
    const a = await duck.pivot(entry, where, spec, MAX_CELLS);
    expectSame(
      a,
      await ch.pivot(entry, where, spec, MAX_CELLS),
      spec.totals.map((t) => ({ aggregationType: t.aggregation ?? '', field: t.field?.name })),
      'big',
    );
    // 2^62 and 2^62 + 1 are one row: five keys of six stored values (null among them).
    expect(a.keys.rows).toBe(BIGS.length - 1);
  });

  it('field ranges agree (bins are sized from them)', async () => {
    for (const [field, q] of [
      ['big', '*'],
      ['dec', 'k:é'],
      ['n', 'big:<0'],
      ['dec', 'g:nowhere'],
    ] as const) {
      const where = parseQuery(q, { fields: entry.fields as FieldDef[], now: Date.now() });
      expect(await ch.fieldRange(entry, where, field)).toEqual(await duck.fieldRange(entry, where, field));
    }
  });
});
