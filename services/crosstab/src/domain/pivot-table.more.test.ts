import { plainAxis, specWith } from '../../test-support/crosstab-input';
import type { FieldDef } from '@quarry/query-language';
import type { AxisValue, GroupRow } from './axis-value';
import type { CrosstabSpec, ShowAs, TotalSpec } from './crosstab-spec';
import { pivotLevels } from './crosstab-spec';
import { keyQuery } from './drill-query';
import { otherOf } from './other-key';
import { buildPivotTable } from './pivot-table';
import { renderCsv } from './render-csv';
import { renderJson } from './render-json';

/*
 * The table's side of manual order, ranks, moving averages, parent shares and the Other key, on groups
 * summed here from a handful of records (the engine's side is tested end to end in tests/).
 */

const field = (name: string): FieldDef => ({ name, type: 'string' }) as FieldDef;

type Rec = { sev: string; team: string; amount: number };
const RECORDS: Rec[] = [
  { sev: 'Low', team: 'a', amount: 5 },
  { sev: 'High', team: 'a', amount: 3 },
  { sev: 'High', team: 'b', amount: 3 },
  { sev: 'Critical', team: 'a', amount: 7 },
  { sev: 'Medium', team: 'b', amount: 3 },
  { sev: 'Minor', team: 'b', amount: 1 },
  { sev: '', team: 'a', amount: 2 },
];

const sum = (showAs: ShowAs, window?: number): TotalSpec => ({
  aggregation: 'Sum',
  field: { name: 'amount', type: 'number' } as FieldDef,
  name: 'Sum',
  showAs,
  ...(window ? { window } : {}),
});

function spec(rows: string[], columns: string[], over: Partial<CrosstabSpec> = {}): CrosstabSpec {
  return specWith({
    rows: rows.map((r) => plainAxis(field(r))),
    columns: columns.map((c) => plainAxis(field(c))),
    totals: [sum('value')],
    ...over,
  });
}

function groupsFor(s: CrosstabSpec, records = RECORDS): GroupRow[] {
  const rows = s.rows.map((a) => a.field.name as keyof Rec);
  const cols = s.columns.map((a) => a.field.name as keyof Rec);
  const out = new Map<string, GroupRow>();
  for (const [r, c] of pivotLevels(s)) {
    for (const rec of records) {
      const rowKey: AxisValue[] = rows.slice(0, r).map((f) => (rec[f] === '' ? null : rec[f]));
      const columnKey: AxisValue[] = cols.slice(0, c).map((f) => (rec[f] === '' ? null : rec[f]));
      const k = JSON.stringify([rowKey, columnKey]);
      const g = out.get(k) ?? { rowKey, columnKey, values: [0] };
      g.values[0] = (g.values[0] ?? 0) + rec.amount;
      out.set(k, g);
    }
  }
  return [...out.values()];
}

const ORDER = ['Critical', 'High', 'Medium', 'Low', 'Blocker'];

describe('manual order', () => {
  it('puts listed keys first in the listed order, then the rest in label order (blank last); an absent value is absent', () => {
    const s = spec(['sev'], [], { rows: [{ ...plainAxis(field('sev')), order: ORDER }] });
    expect(buildPivotTable(s, groupsFor(s)).rows.map((k) => k[0])).toEqual([
      'Critical',
      'High',
      'Medium',
      'Low',
      'Minor',
      null,
    ]);
  });

  it('reverse reverses the listed order; the rest still follow, in reversed label order, blank last', () => {
    const s = spec(['sev'], [], { rows: [{ ...plainAxis(field('sev')), reverse: true, order: ORDER }] });
    expect(buildPivotTable(s, groupsFor(s)).rows.map((k) => k[0])).toEqual([
      'Low',
      'Medium',
      'High',
      'Critical',
      'Minor',
      null,
    ]);
  });

  it('rowLimit keeps the first keys in the manual order, whatever their values; null in the list places the blank key', () => {
    const s = spec(['sev'], [], {
      rows: [{ ...plainAxis(field('sev')), order: [null, 'Minor'] }],
      rowOrder: { by: 'value', measure: 0, direction: 'desc' },
      rowLimit: 3,
    });
    const table = buildPivotTable(s, groupsFor(s));
    // Critical (7) is the largest of the rest; High and Low tie at 6 and 5.
    expect(table.rows.map((k) => k[0])).toEqual([null, 'Minor', 'Critical']);
    expect(table.rowsOmitted).toBe(3);
  });
});

describe('showAs', () => {
  const table = (showAs: ShowAs, over: Partial<CrosstabSpec> = {}, window?: number) => {
    const s = spec(['sev'], ['team'], { totals: [sum(showAs, window)], ...over });
    return buildPivotTable(s, groupsFor(s));
  };

  it('rankInColumn: 1 = largest among the rows of the column, ties share a rank and the next is skipped (RANK.EQ)', () => {
    const t = table('rankInColumn');
    // Column a: Critical 7, Low 5, High 3, (blank) 2; column b: High 3, Medium 3, Minor 1.
    const rank = (sev: string | null, team: string) => t.at([sev], [team])[0];
    expect([rank('Critical', 'a'), rank('Low', 'a'), rank('High', 'a'), rank(null, 'a')]).toEqual([1, 2, 3, 4]);
    expect([rank('High', 'b'), rank('Medium', 'b'), rank('Minor', 'b')]).toEqual([1, 1, 3]);
    // No record: no rank. The Total column ranks the row totals; the Total row has none.
    expect(rank('Critical', 'b')).toBeNull();
    expect(t.at(['High'], [])[0]).toBe(2);
    expect(t.at([], ['a'])[0]).toBeNull();
  });

  it('rankInRow ranks the columns of each row', () => {
    const t = table('rankInRow');
    expect([t.at(['High'], ['a'])[0], t.at(['High'], ['b'])[0]]).toEqual([1, 1]);
    expect([t.at([], ['a'])[0], t.at([], ['b'])[0]]).toEqual([1, 2]);
    expect(t.at(['High'], [])[0]).toBeNull();
  });

  it('movingAverage averages the row and the window - 1 before it, skipping empty cells, a short window at the start', () => {
    const t = table('movingAverage', {}, 2);
    // Rows: Critical, High, Low, Medium, Minor, (blank). Column a: 7, 3, 5, -, -, 2.
    const a = t.rows.map((r) => t.at(r, ['a'])[0]);
    expect(a).toEqual([7, 5, 4, 5, null, 2]);
  });

  it('percentOfParentRow: of the subtotal of the enclosing group; at the outermost level, of the Total row', () => {
    const s = spec(['team', 'sev'], [], { totals: [sum('percentOfParentRow')] });
    const t = buildPivotTable(s, groupsFor(s));
    // Team a: 5 + 3 + 7 + 2 = 17 of 24.
    expect(t.at(['a', 'Critical'], [])[0]).toBeCloseTo((7 / 17) * 100, 12);
    expect(t.at(['a'], [])[0]).toBeCloseTo((17 / 24) * 100, 12);
    expect(t.at([], [])[0]).toBe(100);
    // The subtotals it reads are computed, not shown.
    expect(t.rows.some((k) => k.length === 1)).toBe(false);
  });
});

describe('the Other key', () => {
  it('is a row of its own after the kept ones, read from its own groups; JSON says other: N, CSV its label; its query excludes the kept keys', () => {
    const s = spec(['sev'], [], {
      rowOrder: { by: 'value', measure: 0, direction: 'desc' },
      rowLimit: 2,
      otherRow: true,
    });
    const kept = new Set(['Critical', 'High']);
    const rest = RECORDS.filter((r) => !kept.has(r.sev));
    const groups = [...groupsFor(s), ...groupsFor(spec([], []), rest).map((g) => ({ ...g, rowOther: true as const }))];
    const t = buildPivotTable(s, groups);
    const last = t.rows[t.rows.length - 1];
    expect(t.rows.slice(0, 2)).toEqual([['Critical'], ['High']]);
    expect(otherOf(last)).toEqual({ count: 4, kept: ['Critical', 'High'] });
    expect(t.at(last, [])[0]).toBe(rest.reduce((x, r) => x + r.amount, 0));
    const json = JSON.parse(renderJson(t)) as { rows: Array<{ key: unknown[]; other?: number; query?: string }> };
    expect(json.rows[2]).toMatchObject({ key: [], other: 4, query: 'NOT (sev:=Critical OR sev:=High)' });
    expect(renderCsv(t).split('\r\n')[3]).toBe(`Other (4),${t.at(last, [])[0]}`);
    // A real key with the same text is a key like any other.
    expect(keyQuery(s.rows, ['Other (4)'], t.drill)).toBe('sev:=Other\\ \\(4\\)');
  });

  it('is absent when nothing was left out', () => {
    const s = spec(['team'], [], { rowLimit: 5, otherRow: true });
    const groups = [...groupsFor(s), { rowKey: [], columnKey: [], values: [0], rowOther: true as const }];
    expect(buildPivotTable(s, groups).rows).toEqual([['a'], ['b']]);
  });
});
