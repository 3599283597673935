import { parseQuery, type FieldDef, type QueryNode } from '@quarry/query-language';
import { documentLine } from './typesense-documents';
import { slotsOf, toFilterBy, toSortBy } from './typesense-filter';

const FIELDS: FieldDef[] = [
  { name: 'name', type: 'string' },
  { name: 'score', type: 'integer' },
  { name: 'city', type: 'string' },
  { name: 'price', type: 'number' },
  { name: 'added', type: 'date' },
  { name: 'active', type: 'boolean' },
];
const slots = slotsOf(FIELDS);
const filter = (query: string, fields = FIELDS, max?: number) =>
  toFilterBy(parseQuery(query, { fields, now: Date.UTC(2020, 0, 15) }), slotsOf(fields), max);

/**
 * Typesense's own count of a filter_by (src/filter.cpp: tokenize_filter_query, then the postfix queue
 * of operands and && / || operators is compared with filter_by_max_ops). Parentheses are not counted.
 */
function typesenseOperations(filterBy: string): number {
  return filterBy
    .split(/(&&|\|\||\(|\))/)
    .map((t) => t.trim())
    .filter((t) => t !== '' && t !== '(' && t !== ')').length;
}

describe('Typesense filter translation', () => {
  it('pushes NOT down to the leaves, keeping records without a value', () => {
    expect(filter('NOT score:>5').filterBy).toBe('(__has:!=[1z8] || k1:<6)');
    expect(filter('NOT score:[3 TO 5]').filterBy).toBe('(__has:!=[1z8] || k1:<3 || k1:>5)');
    expect(filter('-added:*').filterBy).toBe('__has:!=[4z8]');
  });

  it('turns fractional bounds on integer fields into integer ones, and an equality with a fraction into nothing', () => {
    expect(filter('score:>2.5').filterBy).toBe('k1:>=3');
    expect(filter('score:<=2.5').filterBy).toBe('k1:<=2');
    expect(filter('score:2.5').filterBy).toBe('__rowid:<0');
    expect(filter('NOT score:2.5').filterBy).toBeUndefined();
    expect(filter('score:[1.5 TO 2.5]').filterBy).toBe('k1:=2');
    expect(filter('score:{2 TO 2.5}').filterBy).toBe('__rowid:<0');
  });

  it('compares numbers, dates and booleans on int64 keys, never on float fields', () => {
    expect(filter('price:>=9.5').filterBy).toBe(
      `k3:>=${new DataView(new Float64Array([9.5]).buffer).getBigInt64(0, true)}`,
    );
    const day = BigInt(Date.UTC(2020, 0, 5)) * 1000n;
    expect(filter('added:2020-01-05').filterBy).toBe(`k4:[${day}..${day + 86_400_000_000n - 1n}]`);
    expect(filter('active:true').filterBy).toBe('k5:=1');
  });

  it('matches a word in all text fields with one condition (several values are ORed by Typesense)', () => {
    const f = filter('ada');
    expect(f.filterBy).toBe('__w:=[0z8ada,2z8ada]');
    expect(f.operations).toBe(1);
    expect(filter('NOT ada').filterBy).toBe('__w:!=[0z8ada,2z8ada]');
  });

  it('looks short prefixes up as stored tokens and expands longer ones, negated too', () => {
    expect(filter('city:s*').filterBy).toBe('__p:=[2z8s]');
    expect(filter('city:sou*').filterBy).toBe('__p:=[2z8sou]');
    expect(filter('city:sout*').filterBy).toBe('__w:=[2z8sout*]');
    expect(filter('-city:s*').filterBy).toBe('__p:!=[2z8s]');
  });

  it('matches two-word phrases by word pairs whose separator cannot collide', () => {
    expect(filter('"new york"').filterBy).toBe('__b:=[0z8newz0york,2z8newz0york]');
    expect(filter('city:new-yo*').filterBy).toBe('__b:=[2z8newz0yo*]');
  });

  // Pairs anywhere in the field matched "new york ... york city"; runs are exact.
  it('matches longer phrases by a run that is the phrase or goes on after it, and negates that exactly', () => {
    expect(filter('city:"new york city"').filterBy).toBe('(__r:=[2z8newz0yorkz0city] || __r:=[2z8newz0yorkz0cityz0*])');
    expect(filter('NOT city:"new york city"').filterBy).toBe(
      '(__r:!=[2z8newz0yorkz0city] && __r:!=[2z8newz0yorkz0cityz0*])',
    );
    expect(filter('"new york city"').filterBy).toBe(
      '(__r:=[0z8newz0yorkz0city,2z8newz0yorkz0city] || __r:=[0z8newz0yorkz0cityz0*,2z8newz0yorkz0cityz0*])',
    );
    expect(filter('city:new-york-ci*').filterBy).toBe('__r:=[2z8newz0yorkz0ci*]');
    expect(filter('-city:new-york-ci*').filterBy).toBe('__r:!=[2z8newz0yorkz0ci*]');
  });

  it('refuses a long phrase it could not test exactly, with a message for the user', () => {
    expect(() => filter(`city:"${Array.from({ length: 12 }, () => 'word').join(' ')}"`)).toThrow(
      expect.objectContaining({ code: 'INVALID_ARGUMENT', message: expect.stringMatching(/phrase .* too long/) }),
    );
  });

  it('counts operations as Typesense does', () => {
    for (const q of [
      'ada',
      'NOT score:[3 TO 5] AND (city:lon* OR "new york")',
      '(a OR b) AND NOT (c OR price:>2)',
      'city:"new york city" OR -added:* OR active:false',
    ]) {
      const f = filter(q);
      expect([q, f.operations]).toEqual([q, typesenseOperations(f.filterBy as string)]);
    }
  });

  it('keeps a query of 10 words over 30 text fields to 10 conditions, though the filter outgrows a GET query string', () => {
    const wide: FieldDef[] = Array.from({ length: 30 }, (_, i) => ({ name: `f${i}`, type: 'string' }));
    const query = Array.from({ length: 10 }, (_, i) => `quarrystone${i}`).join(' ');
    const f = filter(query, wide);
    expect(f.operations).toBe(19);
    expect(typesenseOperations(f.filterBy as string)).toBe(19);
    // Typesense refuses GET query strings over 4000 characters (src/http_server.cpp): hence multi_search.
    expect((f.filterBy as string).length).toBeGreaterThan(4000);
  });

  it('refuses a filter Typesense would refuse, with a message for the user', () => {
    const ors = (n: number) => Array.from({ length: n }, (_, i) => `score:${i}`).join(' OR ');
    expect(filter(ors(50)).operations).toBe(99);
    expect(() => filter(ors(51))).toThrow(
      expect.objectContaining({
        code: 'INVALID_ARGUMENT',
        detail: expect.stringMatching(/101 filter operations and at most 100/),
      }),
    );
    expect(() => filter(ors(5), FIELDS, 8)).toThrow(/too complex/);
  });

  it('leaves the filter out when everything matches and matches nothing explicitly', () => {
    expect(filter('*').filterBy).toBeUndefined();
    const none: QueryNode = { kind: 'none' };
    expect(toFilterBy(none, slots).filterBy).toBe('__rowid:<0');
  });

  it('refuses comparisons on text fields', () => {
    const q: QueryNode = {
      kind: 'compare',
      field: 'name',
      fieldType: 'string',
      op: 'gt',
      value: { type: 'string', value: 'm' },
    };
    expect(() => toFilterBy(q, slots)).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }));
  });
});

describe('Typesense sort translation', () => {
  it('sorts text by rank and everything else by key, missing values last, ties in record order', () => {
    expect(
      toSortBy(
        [
          { field: 'city', type: 'string', direction: 'asc' },
          { field: 'active', type: 'boolean', direction: 'desc' },
        ],
        slots,
      ),
    ).toBe('r2(missing_values: last):asc,k5(missing_values: last):desc,__rowid:asc');
    expect(toSortBy([], slots)).toBe('__rowid:asc');
  });

  it('refuses more than two sort fields (Typesense takes three, one is the record order)', () => {
    const s = { field: 'score', type: 'integer' as const, direction: 'asc' as const };
    expect(() => toSortBy([s, s, s], slots)).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }));
  });
});

/**
 * A model of how Typesense evaluates the text conditions this translation writes: `f:=[v,…]` holds when
 * an element of the string array f equals a value (or starts with it, for a value ending in `*`), and
 * `f:!=[…]` when none does (records without f included). Enough to run the phrase translation against
 * documents built by documentLine here, where no Typesense runs (the conformance suite runs the same
 * cases against a real one under testcontainers).
 */
function evaluate(filterBy: string, doc: Record<string, unknown>): boolean {
  const tokensOf = filterBy.match(/\(|\)|&&|\|\||[^\s()&|]+/g) ?? [];
  let at = 0;
  const leafHolds = (text: string): boolean => {
    const m = /^(\w+):(!?=)\[(.*)\]$/.exec(text);
    if (!m) throw new Error(`the model does not know ${text}`);
    const have = (doc[m[1]] as string[] | undefined) ?? [];
    const values = m[3].split(',');
    const any = values.some((v) =>
      v.endsWith('*') ? have.some((h) => h.startsWith(v.slice(0, -1))) : have.includes(v),
    );
    return m[2] === '=' ? any : !any;
  };
  const primary = (): boolean => {
    const t = tokensOf[at++];
    if (t !== '(') return leafHolds(t);
    const v = expr();
    at++; // ')'
    return v;
  };
  const conj = (): boolean => {
    let v = primary();
    while (tokensOf[at] === '&&') {
      at++;
      v = primary() && v;
    }
    return v;
  };
  const expr = (): boolean => {
    let v = conj();
    while (tokensOf[at] === '||') {
      at++;
      v = conj() || v;
    }
    return v;
  };
  return expr();
}

describe('Typesense phrase translation against documents', () => {
  const fields: FieldDef[] = [
    { name: 'note', type: 'string' },
    { name: 'place', type: 'string' },
  ];
  const docs = [
    ['new york city', 'x'],
    ['new york and york city', 'x'],
    ['the new york city hall', 'x'],
    ['york city new york', 'x'],
    ['new york', 'city centre'],
    ['New-York City!', null],
    ['new york citizens', 'x'],
    [null, 'new york city'],
  ].map(
    (values, rowid) =>
      JSON.parse(
        documentLine({ rowid, values, ranks: [null, null], json: '{}' }, [...slotsOf(fields).values()]),
      ) as Record<string, unknown>,
  );
  const matching = (query: string) => {
    const { filterBy } = filter(query, fields);
    return docs.flatMap((d, i) => (filterBy === undefined || evaluate(filterBy, d) ? [i] : []));
  };

  it.each([
    ['note:"new york city"', [0, 2, 5]],
    ['"new york city"', [0, 2, 5, 7]],
    ['note:"york city new"', [3]],
    ['note:"new york city hall"', [2]],
    ['note:new-york-ci*', [0, 2, 5, 6]],
    ['-note:"new york city"', [1, 3, 4, 6, 7]],
    ['NOT "new york city"', [1, 3, 4, 6]],
    ['-note:new-york-ci*', [1, 3, 4, 7]],
    ['note:"new york" AND NOT note:"new york city"', [1, 3, 4, 6]],
  ])('%s', (query, expected) => {
    expect(matching(query)).toEqual(expected);
  });
});
