import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { CALENDAR_GROUPS } from '@quarry/contract';
import type { IndexEntry } from '@quarry/metadata-store';
import { parseQuery, type FieldDef } from '@quarry/query-language';
import { SnapshotEngine } from '@quarry/snapshots';
import { builtEntry } from '@quarry/testkit';
import type { GroupRow } from '../../domain/axis-value';
import { compareGroups, prepareCompare } from '../../domain/compare-pivots';
import { crosstabSpec, MAX_CELLS, type CrosstabSpec } from '../../domain/crosstab-spec';
import { shiftedSpec, shiftOf, withCompare } from '../../domain/period-compare';
import type { PivotEngine, PivotRestriction } from '../../ports/pivot-engine.port';
import { byKey } from '../../../test-support/clickhouse-adversarial';
import { crosstabInput, type SentCrosstab } from '../../../test-support/crosstab-input';
import { DuckDbPivotEngine } from '../duckdb/duckdb-pivot-engine.adapter';
import { ChdbRunner } from './chdb-runner';
import { ClickHousePivotEngine } from './clickhouse-pivot-engine.adapter';

/*
 * Period comparison on both adapters side by side: what each hands to the domain (the last period, the
 * shifted pivot, then the compared groups and the partial mark) must be the same, group by group, on
 * records spread over a year and a half with instants at daylight-saving edges in several zones, month
 * ends (a month from 31 January), leap days, calendar dates, blanks and a partial last period.
 */

/** Daylight-saving edges (UTC) of New York, Paris, Lord Howe (half an hour) and Santiago, ±1 minute and ±30 minutes. */
const EDGES = [
  '2024-03-10T07:00:00',
  '2024-11-03T06:00:00',
  '2024-03-31T01:00:00',
  '2024-10-27T01:00:00',
  '2024-04-06T15:00:00',
  '2024-10-05T15:30:00',
  '2024-04-07T03:00:00',
  '2024-09-08T04:00:00',
  '2023-03-26T01:00:00',
  '2023-10-29T01:00:00',
];
const EXTRA = ['2024-01-31T12:00:00', '2024-02-29T23:30:00', '2023-12-31T23:59:59', '2024-12-31T23:30:00'];

function writeRecords(file: string): number {
  const times: string[] = [];
  // Every 7 h 13 min from September 2023: each hour of the day in turn, the day boundary crossed in every zone.
  for (let t = Date.UTC(2023, 8, 1); t <= Date.UTC(2025, 2, 14, 9); t += (7 * 60 + 13) * 60_000)
    times.push(new Date(t).toISOString().slice(0, 19));
  for (const e of EDGES) {
    const at = Date.parse(`${e}Z`);
    for (const d of [-30, -1, 0, 1, 30]) times.push(new Date(at + d * 60_000).toISOString().slice(0, 19));
  }
  times.push(...EXTRA);
  const lines = times.map((at, i) => {
    const day = i % 11 === 0 ? null : at.slice(0, 10);
    const k = ['a', 'b', 'c', '', null][i % 5];
    const big = i % 9 === 0 ? null : `${i % 2 ? '' : '-'}4611686018427387${String(900 + (i % 97)).padStart(3, '0')}`;
    return `{"at":${i % 13 === 0 ? 'null' : JSON.stringify(at)},"day":${JSON.stringify(day)},"k":${JSON.stringify(k)},"g":${JSON.stringify(i % 3 ? 'x' : 'y')},"n":${i % 17 === 0 ? 'null' : (i * 7) % 23},"big":${big ?? 'null'}}`;
  });
  fs.writeFileSync(file, lines.join('\n') + '\n');
  return lines.length;
}

const ZONES = ['UTC', 'America/New_York', 'Europe/Paris', 'Australia/Lord_Howe', 'America/Santiago', 'Asia/Kathmandu'];

/** Two values from the same exact inputs: equal, but for the last bits of an average or a median. */
const same = (a: number | null, b: number | null) =>
  a === b || (a !== null && b !== null && Math.abs(a - b) <= 1e-12 * Math.max(Math.abs(a), Math.abs(b)));

function expectSameGroups(duck: GroupRow[], ch: GroupRow[], what: string): void {
  const want = byKey(duck);
  const got = byKey(ch);
  const missing = [...want.keys()].filter((k) => !got.has(k));
  const extra = [...got.keys()].filter((k) => !want.has(k));
  expect({ what, missing, extra }).toEqual({ what, missing: [], extra: [] });
  for (const [key, values] of want)
    values.forEach((v, i) => {
      const g = got.get(key)![i];
      if (!same(v, g)) expect({ what, cell: key, total: i, value: g }).toEqual({ what, cell: key, total: i, value: v });
    });
}

describe('period comparison on DuckDB and ClickHouse, differential, at daylight-saving edges', () => {
  let dir: string;
  let entry: IndexEntry;
  let engine: SnapshotEngine;
  let duck: DuckDbPivotEngine;
  let ch: ClickHousePivotEngine;
  const seen = { cases: 0, partial: 0, comparedValues: 0, restricted: 0 };

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'q-ch-compare-'));
    const file = path.join(dir, 'times.jsonl');
    writeRecords(file);
    entry = await builtEntry({
      name: 'times',
      file,
      dataDir: dir,
      types: {},
      grains: {},
      views: [{ name: 'Keys', field: 'k' }],
    });
    engine = new SnapshotEngine(dir);
    duck = new DuckDbPivotEngine(engine);
    ch = new ClickHousePivotEngine(new ChdbRunner(dir));
  }, 120000);

  afterAll(async () => {
    await engine?.close();
    await ch?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('loads the types the cases rely on (a timestamp and a calendar date)', () => {
    const types = Object.fromEntries(entry.fields.map((f) => [f.name, f.type]));
    expect(types).toEqual({ at: 'date', day: 'date', k: 'string', g: 'string', n: 'integer', big: 'integer' });
  });

  /** The spec as run-crosstab makes it: each compared total given its period. */
  function specOf(sent: SentCrosstab): CrosstabSpec {
    const input = crosstabInput(sent);
    const spec = crosstabSpec(entry, input);
    withCompare(input, spec.totals, [...spec.rows, ...spec.columns]);
    return spec;
  }

  /** The domain's comparison on one engine, from its own table pass (as run-crosstab does). */
  async function compared(
    e: PivotEngine,
    spec: CrosstabSpec,
    where: ReturnType<typeof parseQuery>,
    r: PivotRestriction,
  ) {
    const drawn = await e.pivot(entry, where, spec, MAX_CELLS, undefined, r);
    const prepared = await prepareCompare(e, entry, where, spec);
    return compareGroups(e, entry, where, spec, prepared, { groups: drawn.groups, restrict: r });
  }

  it('random comparisons (every period, both look-backs, every way shown, six zones, filters, kept keys) agree', async () => {
    const filters = ['*', 'k:a OR k:b', 'NOT g:y', 'at:[2024-02-01 TO 2024-11-04}', 'day:[2023-12-01 TO 2024-03-31]'];
    const total = fc.oneof(
      fc.constant({ aggregationType: 'Count' }),
      fc.record({
        aggregationType: fc.constantFrom('Sum', 'Average', 'Min', 'Max', 'Median'),
        field: fc.constantFrom('n', 'big'),
      }),
      fc.constant({ aggregationType: 'Count', dynamicView: 'Keys' }),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('at', 'day'),
        fc.constantFrom(...CALENDAR_GROUPS),
        fc.constantFrom('none', 'outer-year', 'column-g', 'inner-k', 'dayOfWeek', 'hourOfDay'),
        fc.array(
          fc.record({
            total,
            compare: fc.option(
              fc.record({
                to: fc.constantFrom('previousPeriod', 'previousYear'),
                as: fc.constantFrom('value', 'difference', 'percentDifference'),
              }),
            ),
          }),
          { minLength: 1, maxLength: 3 },
        ),
        fc.constantFrom(...ZONES),
        fc.constantFrom(...filters),
        fc.boolean(),
        async (field, period, extra, totals, timeZone, q, subtotals) => {
          if (!totals.some((t) => t.compare)) totals[0].compare = { to: 'previousPeriod', as: 'difference' };
          // Hours of a year and a half on the calendar dates alone: one per day; on instants, one filter's worth.
          const axis = { field, dateGroup: period };
          const rows =
            extra === 'outer-year' && period !== 'year'
              ? [{ field, dateGroup: 'year' }, axis]
              : extra === 'inner-k'
                ? [axis, { field: 'k' }]
                : extra === 'dayOfWeek' || extra === 'hourOfDay'
                  ? [axis, { field, dateGroup: extra }]
                  : [axis];
          const sent = {
            rows,
            columns: extra === 'column-g' ? [{ field: 'g', reverse: false }] : [],
            totals: totals.map((t, i) => ({ ...t.total, name: `t${i}`, ...(t.compare ? { compare: t.compare } : {}) })),
            timeZone,
            subtotals,
          } as unknown as SentCrosstab;
          const what = JSON.stringify({ ...sent, q });
          const spec = specOf(sent);
          const where = parseQuery(q, { fields: entry.fields as FieldDef[], now: Date.now() });
          seen.cases++;
          // What each adapter hands to the domain: the last period, then the shifted pivot it cuts.
          const c = spec.totals.find((t) => t.compare)!.compare!;
          const shift = shiftOf(field, c);
          const [lastD, lastC] = [
            await duck.lastPeriod(entry, where, shift, period, spec),
            await ch.lastPeriod(entry, where, shift, period, spec),
          ];
          expect({ what, last: lastC }).toEqual({ what, last: lastD });
          if (lastD?.partial) seen.partial++;
          if (lastD) {
            const shifted = shiftedSpec(spec, { ...shift, cut: lastD.last, safe: lastD.safe });
            const [a, b] = [
              await duck.pivot(entry, where, shifted, MAX_CELLS),
              await ch.pivot(entry, where, shifted, MAX_CELLS),
            ];
            expect({ what, keys: b.keys }).toEqual({ what, keys: a.keys });
            expectSameGroups(a.groups, b.groups, `${what} shifted`);
          }
          // The table's compared groups and its partial mark, as the domain makes them from each engine.
          const [d, h] = [await compared(duck, spec, where, {}), await compared(ch, spec, where, {})];
          expect({ what, partial: h.spec.comparePartial }).toEqual({ what, partial: d.spec.comparePartial });
          expectSameGroups(d.groups, h.groups, what);
          seen.comparedValues += d.groups.length;
          // Kept outer keys (a rowLimit's): the comparison reads the same keys' shifted records.
          const outer = [...new Set(d.groups.filter((g) => g.rowKey.length === 1).map((g) => g.rowKey[0]))].slice(-2);
          if (outer.length) {
            const r = { rows: outer };
            const [dr, hr] = [await compared(duck, spec, where, r), await compared(ch, spec, where, r)];
            expectSameGroups(dr.groups, hr.groups, `${what} kept ${JSON.stringify(outer)}`);
            seen.restricted++;
          }
        },
      ),
      { numRuns: 80, seed: 4545 },
    );
  }, 600000);

  it('a partial last period is cut at the same elapsed span on both engines', async () => {
    // The last record is 14 March 2025 09:00 UTC: March is partial in every zone above.
    const spec = specOf({
      rows: [{ field: 'at', dateGroup: 'month' }],
      totals: [
        { aggregationType: 'Count', name: 'n' },
        { aggregationType: 'Count', name: 'before', compare: { to: 'previousPeriod', as: 'value' } },
      ],
      timeZone: 'Europe/Paris',
    } as unknown as SentCrosstab);
    const where = parseQuery('*', { fields: entry.fields as FieldDef[], now: Date.now() });
    const [d, h] = [await compared(duck, spec, where, {}), await compared(ch, spec, where, {})];
    expect(h.spec.comparePartial).toEqual(d.spec.comparePartial);
    expect(d.spec.comparePartial).toMatchObject({ key: '2025-03', lastRecord: expect.stringMatching(/^2025-03-14/) });
    expectSameGroups(d.groups, h.groups, 'March 2025 against 1-14 February');
  });

  it('compared what it set out to compare', () => {
    // A differential that silently compared nothing would pass: the counts are part of the test.
    expect(seen.cases).toBe(80);
    expect(seen.partial).toBeGreaterThan(5);
    expect(seen.comparedValues).toBeGreaterThan(1000);
    expect(seen.restricted).toBeGreaterThan(20);
  });
});
