import type { IndexEntry } from '@quarry/metadata-store';
import { parseQuery, type FieldDef } from '@quarry/query-language';
import { localNaive, periodKey, shift, type Grain, type Naive } from '../../../../../tests/support/period-oracle';
import type { GroupRow } from '../../domain/axis-value';
import { compareGroups, prepareCompare } from '../../domain/compare-pivots';
import { crosstabSpec, MAX_CELLS } from '../../domain/crosstab-spec';
import { withCompare } from '../../domain/period-compare';
import { crosstabInput, type SentCrosstab } from '../../../test-support/crosstab-input';
import type { PivotEngine } from '../../ports/pivot-engine.port';
import { RECORDS, useGapsIndex, type OpenedPivotEngine, type Rec } from './pivot-engine.conformance';

interface CompareCase {
  period: Grain;
  to: 'previousPeriod' | 'previousYear';
  timeZone: string;
  /** A filter, and the same filter over the records in plain JS. */
  q: string;
  keep: (r: Rec) => boolean;
}

const SHIFTS: Record<Grain, { unit: 'month' | 'day' | 'hour'; n: number }> = {
  hour: { unit: 'hour', n: 1 },
  day: { unit: 'day', n: 1 },
  week: { unit: 'day', n: 7 },
  month: { unit: 'month', n: 1 },
  quarter: { unit: 'month', n: 3 },
  year: { unit: 'month', n: 12 },
};

/**
 * The table a comparison must draw, in plain JS (tests/support/period-oracle.ts: Intl for the wall clock,
 * calendar arithmetic by hand): per row key, the count and the amount sum of its records and of the
 * records whose local time moved one period (or year) later lands on it, those moved past the last
 * record's local time left out; records without a time have no previous period.
 */
function expected(c: CompareCase) {
  const recs = RECORDS.filter(c.keep);
  const by =
    c.to === 'previousYear'
      ? c.period === 'week'
        ? { unit: 'day', n: 364 }
        : { unit: 'month', n: 12 }
      : SHIFTS[c.period];
  const timed = recs
    .filter((r) => r.at !== null)
    .map((r) => ({ r, t: localNaive(String(r.at).replace(' ', 'T'), c.timeZone) }));
  const last = Math.max(...timed.map((x) => x.t));
  const moved = timed.map((x) => ({ r: x.r, t: shift(x.t, by.unit as 'month' | 'day' | 'hour', by.n) }));
  const lastKey = periodKey(last, c.period);
  const partial = moved.some((x) => x.t > last && periodKey(x.t, c.period) === lastKey);
  const shifted = moved.filter((x) => x.t <= last);
  const sum = (xs: Array<{ r: Rec }>) => {
    const v = xs.map((x) => x.r.amount).filter((a): a is number => typeof a === 'number');
    return v.length ? v.reduce((s, a) => s + a, 0) : null;
  };
  const rows = new Map<string | null, { now: Array<{ r: Rec }>; before: Array<{ r: Rec; t: Naive }> }>();
  const row = (k: string | null) => rows.get(k) ?? rows.set(k, { now: [], before: [] }).get(k)!;
  for (const r of recs)
    row(r.at === null ? null : periodKey(localNaive(String(r.at).replace(' ', 'T'), c.timeZone), c.period)).now.push({
      r,
    });
  for (const x of shifted) if (rows.has(periodKey(x.t, c.period))) row(periodKey(x.t, c.period)).before.push(x);
  const values = (now: Array<{ r: Rec }>, before: Array<{ r: Rec }>) => {
    const [s, p] = [sum(now), sum(before)];
    return [now.length, before.length, s === null || p === null ? null : s - p];
  };
  const cells = new Map([...rows].map(([k, v]) => [k, values(v.now, v.before)]));
  return {
    cells,
    grand: values(
      recs.map((r) => ({ r })),
      shifted,
    ),
    lastKey,
    partial,
    last,
  };
}

/**
 * Period comparison as every PivotEngine with `lastPeriod` must serve it, through the domain's own
 * comparison (compare-pivots.ts), against plain JS over the conformance records.
 */
export function pivotCompareConformance(
  name: string,
  open: (dir: string, entry: IndexEntry) => Promise<OpenedPivotEngine>,
): void {
  describe(`${name}: period comparison against plain JS`, () => {
    let pivots: PivotEngine;
    let entry: IndexEntry;
    const gaps = useGapsIndex(open);
    beforeAll(() => ({ pivots, entry } = gaps()));

    const CASES: CompareCase[] = [
      { period: 'month', to: 'previousPeriod', timeZone: 'UTC', q: '*', keep: () => true },
      { period: 'month', to: 'previousYear', timeZone: 'Europe/Paris', q: '*', keep: () => true },
      { period: 'quarter', to: 'previousPeriod', timeZone: 'America/New_York', q: '*', keep: () => true },
      { period: 'week', to: 'previousYear', timeZone: 'Australia/Lord_Howe', q: '*', keep: () => true },
      {
        period: 'day',
        to: 'previousPeriod',
        timeZone: 'Asia/Kathmandu',
        q: 'region:north',
        keep: (r) => String(r.region).toLowerCase() === 'north',
      },
      { period: 'hour', to: 'previousPeriod', timeZone: 'Europe/Paris', q: 'flag:true', keep: (r) => r.flag === true },
      { period: 'year', to: 'previousPeriod', timeZone: 'UTC', q: '*', keep: () => true },
    ];

    it.each(CASES)(
      '$period against $to in $timeZone, records $q: counts, differences, the partial period',
      async (c) => {
        const sent = {
          rows: [{ field: 'at', dateGroup: c.period }],
          totals: [
            { aggregationType: 'Count', name: 'now' },
            { aggregationType: 'Count', name: 'before', compare: { to: c.to, as: 'value' } },
            { aggregationType: 'Sum', field: 'amount', name: 'change', compare: { to: c.to, as: 'difference' } },
          ],
          timeZone: c.timeZone,
        } as unknown as SentCrosstab;
        const input = crosstabInput(sent);
        const spec = crosstabSpec(entry, input);
        withCompare(input, spec.totals, spec.rows);
        const where = parseQuery(c.q, { fields: entry.fields as FieldDef[], now: Date.now() });
        const drawn = await pivots.pivot(entry, where, spec, MAX_CELLS);
        const prepared = await prepareCompare(pivots, entry, where, spec);
        const got = await compareGroups(pivots, entry, where, spec, prepared, { groups: drawn.groups, restrict: {} });
        const want = expected(c);
        const rowsOf = (gs: GroupRow[]) => gs.filter((g) => g.rowKey.length === 1 && g.columnKey.length === 0);
        expect(
          rowsOf(got.groups)
            .map((g) => g.rowKey[0])
            .sort(),
        ).toEqual([...want.cells.keys()].sort());
        const close = (a: number | null, b: number | null) =>
          a === null || b === null ? a === b : Math.abs(a - b) < 1e-6;
        for (const g of rowsOf(got.groups)) {
          const w = want.cells.get(g.rowKey[0] as string | null)!;
          const ok = g.values.every((v, i) => close(v, w[i]));
          if (!ok) expect({ key: g.rowKey[0], values: g.values }).toEqual({ key: g.rowKey[0], values: w });
        }
        const grand = got.groups.find((g) => g.rowKey.length === 0 && g.columnKey.length === 0)!;
        expect(grand.values.every((v, i) => close(v, want.grand[i]))).toBe(true);
        // Some period has a previous one: the comparison is not vacuous.
        expect([...want.cells.values()].some((v) => (v[1] ?? 0) > 0)).toBe(true);
        expect(got.spec.comparePartial?.key).toBe(want.partial ? want.lastKey : undefined);
      },
    );
  });
}
