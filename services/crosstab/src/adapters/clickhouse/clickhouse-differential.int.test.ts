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
import { crosstabSpec, MAX_CELLS } from '../../domain/crosstab-spec';
import type { PivotResult } from '../../ports/pivot-engine.port';
import { crosstabInput, type SentCrosstab } from '../../../test-support/crosstab-input';
import { DuckDbPivotEngine } from '../duckdb-pivot-engine.adapter';
import { ChdbRunner } from './chdb-runner';
import { ClickHousePivotEngine } from './clickhouse-pivot-engine.adapter';

/*
 * The two PivotEngine adapters side by side, group by group and cell by cell, on adversarial records:
 * instants at daylight-saving edges (New York, Paris, Lord Howe's half hour), calendar dates at ISO week
 * 53, integers past 2^53 whose sums pass 2^63, decimals, unicode and blank keys. Keys and counts must be
 * equal; integer sums equal as the nearest double of the exact sum; other doubles to 12 digits.
 */

const KEYS = [
  'São Paulo',
  'são paulo',
  'İstanbul',
  'ǅemal',
  '日本',
  '🙂',
  'e\u0301',
  'é',
  '',
  null,
  ' x ',
  'a`b',
  "it's",
];
const INSTANTS = [
  '2024-03-10 06:59:59',
  '2024-03-10 07:00:00',
  '2024-03-10 07:30:00',
  '2024-11-03 05:30:00',
  '2024-11-03 06:00:00',
  '2024-11-03 06:30:00',
  '2024-03-31 00:59:59',
  '2024-03-31 01:00:00',
  '2024-10-27 00:30:00',
  '2024-10-27 01:30:00',
  '2024-04-06 14:45:00',
  '2024-04-06 15:15:00',
  '2020-12-31 23:30:00',
  '2021-01-01 00:30:00',
  null,
];
const DAYS = ['2020-12-31', '2021-01-01', '2021-01-03', '2021-01-04', '2024-02-29', '2024-12-30', null];
const BIGS = ['4611686018427387904', '4611686018427387905', '9007199254740993', '-9000000000000000000', '7', 'null'];
const DECS = ['0.1', '0.2', '0.3', '999999999999.99', '-0.01', '1e-7', '123456789.123456', 'null'];

function writeRecords(file: string, n: number): void {
  let seed = 45;
  const pick = <T>(xs: readonly T[]): T => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return xs[seed % xs.length];
  };
  const lines: string[] = [];
  for (let i = 0; i < n; i++) {
    const k = pick(KEYS);
    const at = pick(INSTANTS);
    const day = pick(DAYS);
    // Raw JSON text: a JS number cannot carry the integers past 2^53.
    lines.push(
      `{"k":${JSON.stringify(k)},"g":${JSON.stringify(pick(['x', 'y', null]))},"at":${JSON.stringify(at)},"day":${JSON.stringify(day)},"big":${pick(BIGS)},"dec":${pick(DECS)},"n":${(i * 7) % 23},"flag":${pick(['true', 'false', 'null'])}}`,
    );
  }
  fs.writeFileSync(file, lines.join('\n') + '\n');
}

const VIEWS = [
  { name: 'Keys', field: 'k' },
  { name: 'Days', field: 'day' },
  { name: 'Bigs', field: 'big' },
];

const byKey = (groups: GroupRow[]) => new Map(groups.map((g) => [JSON.stringify([g.rowKey, g.columnKey]), g.values]));

/** The largest magnitude of each measured field's values: order and rounding errors are relative to it. */
const MAGNITUDE: Record<string, number> = { big: 9e18, dec: 1e12, n: 22 };

/**
 * How far two engines' values of a total may be apart: nothing for counts, distinct counts, Min, Max and
 * integer sums (each the nearest double of one exact value); for other doubles 12 digits of the value,
 * or 1e-15 of the magnitudes it is made of (summation order and interpolation between values of 9e18
 * move the last bits of a small result made of huge values).
 */
function tolerance(t: { aggregationType: string; field?: string }, records: number): (v: number, g: number) => boolean {
  const exact = (v: number, g: number) => v === g;
  if (!t.field || t.aggregationType === 'Count' || t.aggregationType === 'Min' || t.aggregationType === 'Max')
    return exact;
  if (t.aggregationType === 'Sum' && t.field !== 'dec') return exact;
  const scale = MAGNITUDE[t.field] * (t.aggregationType === 'Sum' ? records : 1);
  return (v, g) => Math.abs(v - g) <= Math.max(1e-12 * Math.max(Math.abs(v), Math.abs(g)), 1e-15 * scale);
}

function expectSame(
  duck: PivotResult,
  ch: PivotResult,
  totals: Array<{ aggregationType: string; field?: string }>,
  what: string,
): void {
  expect({ what, keys: ch.keys, over: ch.groups.length === 0 }).toEqual({
    what,
    keys: duck.keys,
    over: duck.groups.length === 0,
  });
  const want = byKey(duck.groups);
  const got = byKey(ch.groups);
  expect({ what, groups: [...got.keys()].sort() }).toEqual({ what, groups: [...want.keys()].sort() });
  const close = totals.map((t) => tolerance(t, 3000));
  for (const [key, values] of want) {
    const other = got.get(key)!;
    values.forEach((v, i) => {
      const g = other[i];
      const same = v === g || (v !== null && g !== null && close[i](v, g));
      if (!same) expect({ what, cell: key, total: i, value: g }).toEqual({ what, cell: key, total: i, value: v });
    });
  }
}

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
