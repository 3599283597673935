import { parseQuery, type FieldDef, type QueryNode } from '@quarry/query-language';
import { EVERY_RECORD_TOKEN, rankToken } from './typesense-encoding';
import { slotsOf } from './typesense-filter';
import { fieldWeight, MAX_RANK_WORDS, rankedQuery } from './typesense-ranking';

const FIELDS: FieldDef[] = [
  { name: 'title', type: 'string' },
  { name: 'year', type: 'integer' },
  { name: 'body', type: 'string' },
];
const slots = slotsOf(FIELDS);
const ranked = (query: string) => rankedQuery(parseQuery(query, { fields: FIELDS, now: 0 }), slots);

describe('Typesense ranked q', () => {
  it('starts with the token every record holds, then the words, over the text fields they test', () => {
    expect(ranked('ada lovelace')).toEqual({
      q: `${EVERY_RECORD_TOKEN} ada lovelace`,
      query_by: 't0,t2,__q',
      query_by_weights: '1,1,0',
    });
    expect(ranked('body:ada')).toEqual({ q: 'z7 ada', query_by: 't2,__q', query_by_weights: '1,0' });
  });

  it('holds the words of a phrase one by one and each word once', () => {
    expect(ranked('"new york" york')?.q).toBe('z7 new york');
  });

  it('writes words in the encoding the t fields hold', () => {
    expect(ranked('café')?.q).toBe(`z7 ${rankToken('café')}`);
    expect(rankToken('café')).toBe('cafz2e9');
  });

  it('leaves out what adds no text match: NOT, prefixes, ranges', () => {
    expect(ranked('ada -lovelace NOT title:grace')?.q).toBe('z7 ada');
    expect(ranked('lov* year:[1 TO 5]')).toBeUndefined();
    expect(ranked('*')).toBeUndefined();
  });

  it('orders the fields by weight, the largest boost of the clauses on each, heaviest first', () => {
    expect(ranked('title:ada^3 OR body:grace^2 OR body:ada^5')).toEqual({
      q: 'z7 ada grace',
      query_by: 't2,t0,__q',
      query_by_weights: '5,3,0',
    });
  });

  it('rounds boosts to Typesense weights from 1 to 15, 0 only for ^0', () => {
    expect([0, 0.2, 1, 2.5, 2.4, 15, 40].map(fieldWeight)).toEqual([0, 1, 1, 3, 2, 15, 15]);
  });

  it('ranks a fuzzy word by its resolved expansions, by the word itself while unresolved', () => {
    const fuzzy: QueryNode = {
      kind: 'match',
      fields: ['body'],
      words: ['colour'],
      prefix: false,
      fuzzy: 1,
      expansions: ['colour', 'color', 'colours'],
    };
    expect(rankedQuery(fuzzy, slots)?.q).toBe('z7 colour color colours');
    expect(rankedQuery({ ...fuzzy, expansions: undefined }, slots)?.q).toBe('z7 colour');
    expect(rankedQuery({ ...fuzzy, expansions: [] }, slots)).toBeUndefined();
  });

  it(`keeps at most ${MAX_RANK_WORDS} words`, () => {
    const words = Array.from({ length: 40 }, (_, i) => `w${i}`).join(' OR ');
    expect(ranked(words)?.q.split(' ')).toHaveLength(MAX_RANK_WORDS + 1);
  });
});
