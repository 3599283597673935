import type { IndexEntry } from '@quarry/metadata-store';
import { crosstabInput } from '../../test-support/crosstab-input';
import type { CompletePivot } from '@quarry/contract';
import { crosstabSpec } from './crosstab-spec';

const entry: IndexEntry = {
  name: 'movies',
  description: '',
  fields: [
    { name: 'Title', type: 'string' },
    { name: 'Gross', type: 'number' },
  ],
  views: [{ name: 'Titles', field: 'Title' }],
  recordCount: 0,
  version: 1,
  snapshot: 'movies/1.duckdb',
  updatedAt: '2026-01-01T00:00:00.000Z',
};

const base = crosstabInput({ rows: ['Title'], totals: [{ aggregationType: 'Count' }] });
const huge = `h${'x'.repeat(900 * 1024)}`;

function detailOf(input: CompletePivot): string {
  try {
    crosstabSpec(entry, input);
  } catch (err) {
    return (err as { detail: string }).detail;
  }
  throw new Error('accepted');
}

describe('crosstabSpec quotes what the caller sent, cut to 100 characters', () => {
  const cut = `"h${'x'.repeat(99)}…" (${huge.length} characters)`;

  it.each<[string, CompletePivot, string]>([
    ['a row field', { ...base, rows: [{ field: huge, reverse: false }] }, `rows[0]: unknown field ${cut}`],
    [
      'a column field',
      { ...base, columns: [{ field: huge, reverse: false }] },
      `columns[0].field: unknown field ${cut}`,
    ],
    [
      'a dynamic view',
      { ...base, totals: [{ ...base.totals[0], dynamicView: huge }] },
      `totals[0].dynamicView: unknown view ${cut}; this index has Records, Titles`,
    ],
    [
      'a total field',
      { ...base, totals: [{ ...base.totals[0], field: huge }] },
      `totals[0].field: unknown field ${cut}`,
    ],
  ])('%s of 900 KB', (_, input, detail) => {
    expect(detailOf(input)).toBe(detail);
  });

  it('keeps short names whole, as before', () => {
    expect(detailOf({ ...base, rows: [{ field: 'Nope', reverse: false }] })).toBe('rows[0]: unknown field "Nope"');
    expect(detailOf({ ...base, totals: [{ ...base.totals[0], aggregationType: 'Sum', field: 'Title' }] })).toBe(
      'totals[0]: Sum needs a numeric field, but "Title" is string',
    );
  });
});
