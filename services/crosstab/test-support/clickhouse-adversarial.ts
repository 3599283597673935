import fs from 'node:fs';
import type { GroupRow } from '../src/domain/axis-value';
import type { PivotResult } from '../src/ports/pivot-engine.port';

/*
 * The two PivotEngine adapters side by side, group by group and cell by cell, on adversarial records:
 * instants at daylight-saving edges (New York, Paris, Lord Howe's half hour), calendar dates at ISO week
 * 53, integers past 2^53 whose sums pass 2^63, decimals, unicode and blank keys. Keys and counts must be
 * equal; integer sums equal as the nearest double of the exact sum; other doubles to 12 digits.
 */

export const KEYS = [
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
export const INSTANTS = [
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
export const DAYS = ['2020-12-31', '2021-01-01', '2021-01-03', '2021-01-04', '2024-02-29', '2024-12-30', null];
export const BIGS = [
  '4611686018427387904',
  '4611686018427387905',
  '9007199254740993',
  '-9000000000000000000',
  '7',
  'null',
];
export const DECS = ['0.1', '0.2', '0.3', '999999999999.99', '-0.01', '1e-7', '123456789.123456', 'null'];

export function writeRecords(file: string, n: number): void {
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

export const VIEWS = [
  { name: 'Keys', field: 'k' },
  { name: 'Days', field: 'day' },
  { name: 'Bigs', field: 'big' },
];

export const byKey = (groups: GroupRow[]) =>
  new Map(groups.map((g) => [JSON.stringify([g.rowKey, g.columnKey]), g.values]));

/** The largest magnitude of each measured field's values: order and rounding errors are relative to it. */
const MAGNITUDE: Record<string, number> = { big: 9e18, dec: 1e12, n: 22 };

/**
 * How far two engines' values of a total may be apart: nothing for counts, distinct counts, Min, Max and
 * integer sums (each the nearest double of one exact value); for other doubles 12 digits of the value,
 * or 1e-15 of the magnitudes it is made of (summation order and interpolation between values of 9e18
 * move the last bits of a small result made of huge values).
 */
export function tolerance(
  t: { aggregationType: string; field?: string },
  records: number,
): (v: number, g: number) => boolean {
  const exact = (v: number, g: number) => v === g;
  if (!t.field || t.aggregationType === 'Count' || t.aggregationType === 'Min' || t.aggregationType === 'Max')
    return exact;
  if (t.aggregationType === 'Sum' && t.field !== 'dec') return exact;
  const scale = MAGNITUDE[t.field] * (t.aggregationType === 'Sum' ? records : 1);
  return (v, g) => Math.abs(v - g) <= Math.max(1e-12 * Math.max(Math.abs(v), Math.abs(g)), 1e-15 * scale);
}

export function expectSame(
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
