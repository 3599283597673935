import type { PdfPage } from './pdf';

export type Movie = Record<string, string | number | null>;

/** A4 in points, either way up (Chromium writes 595.92 × 841.92). */
export const A4 = { short: 595.92, long: 841.92 };

/** Text as the PDF draws it: runs joined, so blanks between them do not count; a ligature is its letters. */
export const squeeze = (s: string) => s.normalize('NFKC').replace(/\s+/g, '');

/** Records by a field's value, counted in plain JS over the data set's file. */
export function countBy(field: string, records: Movie[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const m of records) {
    const k = m[field];
    if (k === null || k === undefined) continue;
    counts.set(String(k), (counts.get(String(k)) ?? 0) + 1);
  }
  return counts;
}

/** A query over three genres, and the films it matches counted in plain JS. */
export const THREE_GENRES = '(Major Genre):(Drama OR Comedy OR Action)';
export function threeGenres(movies: Movie[]): Movie[] {
  // A text field matches by word: "Black Comedy" is a Comedy too.
  const words = new Set(['Drama', 'Comedy', 'Action']);
  return movies.filter((m) =>
    String(m['Major Genre'])
      .split(' ')
      .some((w) => words.has(w)),
  );
}

/**
 * The films `picked` by `query` counted by Distributor (rows) and Major Genre (columns), printed on A4
 * portrait pages: every page repeats the header rows, names the index and query and says "Page N of M";
 * every distributor's row, its counts by genre (blank where none) then its total, is whole on one page;
 * the Total row stands once, on the last page (repeated, it would read as that page's total).
 */
export function expectDistributorPages(pages: PdfPage[], picked: Movie[], query: string): void {
  const genres = [...countBy('Major Genre', picked).keys()].sort();
  for (const p of pages) {
    expect(p.width).toBeCloseTo(A4.short, 0);
    expect(p.height).toBeCloseTo(A4.long, 0);
  }
  const header = squeeze(`Distributor ${genres.join(' ')} Total`);
  pages.forEach((p, i) => {
    const text = squeeze(p.text);
    expect(text).toContain(header);
    expect(text).toContain(squeeze(`movies ${query}`));
    expect(text).toContain(squeeze(`Page ${i + 1} of ${pages.length}`));
  });
  for (const [name, total] of countBy('Distributor', picked)) {
    const byGenre = genres.map(
      (g) => picked.filter((m) => m.Distributor === name && m['Major Genre'] === g).length || '',
    );
    const row = squeeze(`${name}${byGenre.join('')}${total}`);
    expect(pages.filter((p) => squeeze(p.text).includes(row)).length).toBe(1);
  }
  const totals = genres.map((g) => picked.filter((m) => m['Major Genre'] === g).length);
  const totalRow = squeeze(`Total${totals.join('')}${picked.length}`);
  expect(pages.map((p) => squeeze(p.text).includes(totalRow))).toEqual(pages.map((_, i) => i === pages.length - 1));
}
