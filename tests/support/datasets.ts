import fs from 'node:fs';
import path from 'node:path';

export const VEGA = path.resolve(__dirname, '..', '..', 'node_modules', 'vega-datasets', 'data');

export type Rec = Record<string, unknown>;

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** movies.json as Quarry serves it: Release Date "Jun 12 1998" becomes "1998-06-12", titles are text. */
export function movies(): Rec[] {
  const raw = JSON.parse(fs.readFileSync(path.join(VEGA, 'movies.json'), 'utf8')) as Rec[];
  return raw.map((m) => {
    const out: Rec = { ...m, Title: m.Title === null ? null : String(m.Title) };
    const d = m['Release Date'];
    if (typeof d === 'string') {
      const [mon, day, year] = d.split(' ');
      out['Release Date'] = `${year}-${String(MONTHS.indexOf(mon) + 1).padStart(2, '0')}-${day.padStart(2, '0')}`;
    }
    return out;
  });
}

/** flights-20k.json as served: "2001/01/01 00:47" becomes "2001-01-01T00:47:00". */
export function flights20k(): Rec[] {
  const raw = JSON.parse(fs.readFileSync(path.join(VEGA, 'flights-20k.json'), 'utf8')) as Rec[];
  return raw.map((f) => ({
    ...f,
    date: `${String(f.date).slice(0, 10).replace(/\//g, '-')}T${String(f.date).slice(11)}:00`,
  }));
}

// ---- an independent model of the query semantics, in plain JS ----

export const wordsOf = (v: unknown): string[] =>
  v === null || v === undefined
    ? []
    : String(v)
        .toLowerCase()
        .split(/[^\p{L}\p{N}]+/u)
        .filter(Boolean);

export function hasPhrase(v: unknown, phrase: string[], prefixLast = false): boolean {
  const ws = wordsOf(v);
  for (let i = 0; i + phrase.length <= ws.length; i++) {
    if (phrase.every((p, j) => (prefixLast && j === phrase.length - 1 ? ws[i + j].startsWith(p) : ws[i + j] === p)))
      return true;
  }
  return false;
}

export function textFields(rows: Rec[]): string[] {
  const keys = Object.keys(rows[0]);
  return keys.filter(
    (k) => rows.some((r) => typeof r[k] === 'string') && rows.every((r) => r[k] === null || typeof r[k] === 'string'),
  );
}

type Dir = 'asc' | 'desc';

/** Quarry's order: lower-cased text, missing values last in both directions, ties in source order. */
export function sortRows(rows: Rec[], keys: Array<[string, Dir]>): Rec[] {
  const indexed = rows.map((r, i) => ({ r, i }));
  const norm = (v: unknown) => (typeof v === 'string' ? v.toLowerCase() : v);
  indexed.sort((a, b) => {
    for (const [k, dir] of keys) {
      const x = norm(a.r[k]);
      const y = norm(b.r[k]);
      const xn = x === null || x === undefined;
      const yn = y === null || y === undefined;
      if (xn || yn) {
        if (xn && yn) continue;
        return xn ? 1 : -1;
      }
      if (x === y) continue;
      const c = (x as number | string) < (y as number | string) ? -1 : 1;
      return dir === 'asc' ? c : -c;
    }
    return a.i - b.i;
  });
  return indexed.map((x) => x.r);
}

export function page<T>(rows: T[], pageNo: number, size: number): T[] {
  return rows.slice((pageNo - 1) * size, pageNo * size);
}

/** A small chart of the movies index (one row axis, a count, 640 x 480): CROSSTAB.EXECUTE's params. */
export const SMALL_PIE_CHART = {
  index: 'movies',
  rows: ['Major Genre'],
  totals: [{ aggregationType: 'Count' }],
  chartType: 'Pie2D',
  width: 640,
  height: 480,
};
