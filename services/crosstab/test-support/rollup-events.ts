import fs from 'node:fs';
import path from 'node:path';
import type { IndexEntry, RollupDef } from '@quarry/metadata-store';
import { builtEntry } from '@quarry/testkit';
import { mulberry32 } from '../../../tests/support/seeded-random';

/** Seeded event records and rollups over them, for tests that compare rollup answers with scans. */

type Rec = Record<string, unknown>;

export function records(n: number): Rec[] {
  const rnd = mulberry32(44);
  const pick = <T>(xs: T[]): T => xs[Math.floor(rnd() * xs.length)];
  const start = Date.UTC(2023, 0, 1);
  return Array.from({ length: n }, () => {
    const ms = start + Math.floor(rnd() * 700) * 86_400_000 + pick([0, 1, 22, 23]) * 3_600_000 + 15 * 60_000;
    return {
      at: rnd() < 0.05 ? null : new Date(ms).toISOString().slice(0, 19).replace('T', ' '),
      day: rnd() < 0.05 ? null : new Date(ms).toISOString().slice(0, 10),
      kind: pick(['alpha', 'Alpha', 'beta', 'gamma delta', '', null]),
      region: pick(['North', 'South', 'East', 'West', null]),
      code: pick(['SFO', 'LAX', 'ord', 'Ord', 'JFK', '', null]),
      amount: rnd() < 0.1 ? null : Math.round((rnd() * 400 - 100) * 1000) / 1000,
      qty: rnd() < 0.1 ? null : Math.floor(rnd() * 90) - 10,
    };
  });
}

export const ROLLUPS: RollupDef[] = [
  {
    name: 'by_kind_region_month',
    rows: ['kind', 'region'],
    columns: [{ field: 'at', grain: 'month' }],
    totals: [
      { kind: 'count' },
      { kind: 'sum', field: 'amount' },
      { kind: 'sum', field: 'qty' },
      { kind: 'average', field: 'amount' },
      { kind: 'min', field: 'qty' },
      { kind: 'max', field: 'amount' },
      { kind: 'countDistinct', field: 'code' },
    ],
  },
  {
    name: 'by_region_day',
    rows: ['region'],
    columns: [{ field: 'day' }],
    totals: [{ kind: 'count' }, { kind: 'sum', field: 'qty' }, { kind: 'average', field: 'qty' }],
  },
];

const close = (a: unknown, b: unknown) =>
  typeof a === 'number' && typeof b === 'number'
    ? Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b))
    : a === b;

/** Equal JSON, numbers to 9 digits (a compensated sum of partial sums may differ in the last bits). */
export function sameJson(got: unknown, want: unknown, at: string): void {
  if (Array.isArray(want)) {
    if (!Array.isArray(got) || got.length !== want.length)
      throw new Error(`${at}: ${JSON.stringify(got)} vs ${JSON.stringify(want)}`);
    want.forEach((w, i) => sameJson(got[i], w, `${at}[${i}]`));
    return;
  }
  if (want !== null && typeof want === 'object') {
    if (got === null || typeof got !== 'object') throw new Error(`${at}: ${JSON.stringify(got)} vs an object`);
    const keys = Object.keys(want).sort();
    expect(Object.keys(got).sort()).toEqual(keys);
    for (const k of keys) sameJson((got as Rec)[k], (want as Rec)[k], `${at}.${k}`);
    return;
  }
  if (!close(got, want)) throw new Error(`${at}: got ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
}

/** An "events" version of `records(6000)` in `dir`, built with ROLLUPS, and its catalog entry keeping them. */
export async function eventsWithRollups(dir: string): Promise<IndexEntry> {
  const file = path.join(dir, 'events.json');
  fs.writeFileSync(file, JSON.stringify(records(6000)));
  const built = await builtEntry({
    name: 'events',
    file,
    dataDir: dir,
    types: { day: 'date' },
    views: [],
    rollups: ROLLUPS,
  });
  return { ...built, rollups: ROLLUPS };
}
