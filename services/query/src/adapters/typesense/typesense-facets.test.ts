import type { FacetRequest } from '../../ports/search-index.port';
import { doubleKey, facetText } from './typesense-encoding';
import {
  BLANK,
  decodeFacetValue,
  facetCounts,
  FACET_MAX_VALUES,
  moreValuesNeeded,
  readFacet,
  type FacetAnswer,
} from './typesense-facets';
import { slotsOf } from './typesense-filter';
import { readSearchResults } from './typesense-protocol';

const slots = slotsOf([
  { name: 'city', type: 'string' },
  { name: 'year', type: 'integer' },
  { name: 'price', type: 'number' },
  { name: 'added', type: 'date' },
  { name: 'active', type: 'boolean' },
]);
const slot = (name: string) => {
  const s = slots.get(name);
  if (!s) throw new Error(`no slot ${name}`);
  return s;
};
const answer = (values: Array<[string, number]>, distinct = values.length): FacetAnswer => ({
  values: values.map(([raw, count]) => ({ raw, count })),
  distinct,
});

describe('Typesense facet values', () => {
  it('decode from the collection encoding back to what the embedded engines answer', () => {
    expect(decodeFacetValue(slot('city'), facetText('New York'))).toBe('New York');
    expect(decodeFacetValue(slot('year'), '1999')).toBe(1999);
    expect(decodeFacetValue(slot('year'), '9007199254740993')).toBe('9007199254740993');
    expect(decodeFacetValue(slot('price'), String(doubleKey(-12.25)))).toBe(-12.25);
    expect(decodeFacetValue(slot('price'), String(doubleKey(1e300)))).toBe(1e300);
    expect(decodeFacetValue(slot('added'), '2020-01-05')).toBe('2020-01-05');
    expect(decodeFacetValue(slot('active'), '1')).toBe(true);
    expect(decodeFacetValue(slot('active'), '0')).toBe(false);
  });

  it('keep long texts apart by a hash, shown cut with …', () => {
    const long = 'é'.repeat(200);
    const [a, b] = [facetText(`${long}a`), facetText(`${long}b`)];
    expect(a).not.toBe(b);
    expect(new TextEncoder().encode(a).length).toBeLessThanOrEqual(255);
    expect(decodeFacetValue(slot('city'), a)).toBe(`${'é'.repeat(100)}…`);
  });
});

describe('Typesense facet counts', () => {
  const city: FacetRequest = { field: 'city', type: 'string', limit: 2 };

  it('list the most frequent values, ties by value, blank last among equal counts; others is what they leave', () => {
    const counts = facetCounts(
      city,
      slot('city'),
      answer([
        [facetText('Paris'), 3],
        [facetText('London'), 3],
        [facetText('Austin'), 1],
      ]),
      0,
      7,
    );
    expect(counts).toEqual({
      field: 'city',
      values: [
        { value: 'London', count: 3 },
        { value: 'Paris', count: 3 },
      ],
      others: 1,
    });
    const withBlanks = facetCounts({ ...city, limit: 3 }, slot('city'), answer([[facetText('Paris'), 2]]), 2, 5);
    expect(withBlanks.values).toEqual([
      { value: 'Paris', count: 2 },
      { value: BLANK, count: 2 },
    ]);
    expect(withBlanks.others).toBe(1);
  });

  it('order numbers and big integers as numbers, text by code point', () => {
    const year = facetCounts(
      { field: 'year', type: 'integer', limit: 3 },
      slot('year'),
      answer([
        ['10', 1],
        ['9', 1],
        ['9007199254740993', 1],
      ]),
      0,
      3,
    );
    expect(year.values.map((v) => v.value)).toEqual([9, 10, '9007199254740993']);
    const text = facetCounts(
      { ...city, limit: 3 },
      slot('city'),
      answer(['b', 'B', 'é'].map((c) => [facetText(c), 1])),
      0,
      3,
    );
    expect(text.values.map((v) => v.value)).toEqual(['B', 'b', 'é']);
  });

  it('decode a canned Typesense answer', () => {
    const [result] = readSearchResults(
      {
        results: [
          {
            found: 6,
            hits: [],
            facet_counts: [
              {
                field_name: 'k1',
                sampled: false,
                counts: [
                  { value: '2020', count: 4, highlighted: '2020' },
                  { value: '2019', count: 1, highlighted: '2019' },
                ],
                stats: { total_values: 2 },
              },
            ],
          },
        ],
      },
      1,
    );
    const facet = readFacet(
      result.facets.find((f) => f.field_name === 'k1'),
      'year',
    );
    expect(facet).toEqual({
      values: [
        { raw: '2020', count: 4 },
        { raw: '2019', count: 1 },
      ],
      distinct: 2,
    });
    expect(facetCounts({ field: 'year', type: 'integer', limit: 5 }, slot('year'), facet, 1, result.found)).toEqual({
      field: 'year',
      values: [
        { value: 2020, count: 4 },
        { value: 2019, count: 1 },
        { value: BLANK, count: 1 },
      ],
      others: 0,
    });
    expect(() => readFacet(undefined, 'year')).toThrow(expect.objectContaining({ code: 'INTERNAL' }));
  });
});

describe('Typesense facet ties', () => {
  it('need no more values when Typesense gave all it holds, or fewer than asked', () => {
    expect(moreValuesNeeded(answer([['a', 2]], 1), 3, 2, 0)).toBeNull();
    expect(
      moreValuesNeeded(
        answer(
          [
            ['a', 2],
            ['b', 2],
            ['c', 2],
          ],
          3,
        ),
        3,
        2,
        0,
      ),
    ).toBeNull();
  });

  it('need no more when the last value returned is below the count at the limit', () => {
    expect(
      moreValuesNeeded(
        answer(
          [
            ['a', 5],
            ['b', 4],
            ['c', 3],
          ],
          10,
        ),
        3,
        2,
        0,
      ),
    ).toBeNull();
  });

  it('ask for more when the last value returned ties with a listed one, blanks included', () => {
    expect(
      moreValuesNeeded(
        answer(
          [
            ['a', 5],
            ['b', 4],
            ['c', 4],
          ],
          100,
        ),
        3,
        2,
        0,
      ),
    ).toBe(12);
    expect(
      moreValuesNeeded(
        answer(
          [
            ['a', 5],
            ['b', 4],
            ['c', 4],
          ],
          7,
        ),
        3,
        2,
        0,
      ),
    ).toBe(7);
    // With 6 blanks the limit's count is 5, and a 5 may be left out.
    expect(
      moreValuesNeeded(
        answer(
          [
            ['a', 5],
            ['b', 5],
          ],
          9,
        ),
        2,
        2,
        6,
      ),
    ).toBe(8);
    expect(
      moreValuesNeeded(
        answer(
          [
            ['a', 5],
            ['b', 5],
          ],
          1e6,
        ),
        FACET_MAX_VALUES,
        2,
        0,
      ),
    ).toBeNull();
  });
});
