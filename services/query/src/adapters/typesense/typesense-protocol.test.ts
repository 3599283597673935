import {
  backendError,
  beyondMaxHits,
  checkImport,
  collectionName,
  DEFAULT_MAX_HITS,
  HITS_PER_REQUEST,
  planPage,
  readSearchResults,
  staleCollections,
} from './typesense-protocol';

describe('page plans', () => {
  const plan = (offset: number, limit: number, allInRecordOrder = false) =>
    planPage(offset, limit, { maxHits: DEFAULT_MAX_HITS, allInRecordOrder });

  it('split a page into searches of at most 250 hits (Typesense max_per_page)', () => {
    expect(HITS_PER_REQUEST).toBe(250);
    expect(plan(0, 1000)).toEqual({
      kind: 'offset',
      requests: [
        { offset: 0, limit: 250 },
        { offset: 250, limit: 250 },
        { offset: 500, limit: 250 },
        { offset: 750, limit: 250 },
      ],
    });
    expect(plan(40, 260)).toEqual({
      kind: 'offset',
      requests: [
        { offset: 40, limit: 250 },
        { offset: 290, limit: 10 },
      ],
    });
  });

  it('page by offset up to limit_hits, which Typesense serves', () => {
    expect(plan(999_900, 100).kind).toBe('offset');
    expect(plan(999_901, 100).kind).toBe('beyond');
  });

  it('page the whole index in record order past limit_hits by __rowid range instead of an empty page', () => {
    expect(plan(2_999_950, 100, true)).toEqual({
      kind: 'rowid',
      requests: [{ from: 2_999_950, to: 3_000_049 }],
    });
  });

  it('still asks for the total when no hits are wanted', () => {
    expect(plan(5_000_000, 0)).toEqual({ kind: 'offset', requests: [{ offset: 0, limit: 0 }] });
  });

  it('refuses windows that are not whole non-negative numbers', () => {
    expect(() => plan(-1, 10)).toThrow(expect.objectContaining({ code: 'INTERNAL' }));
    expect(() => plan(1.5, 10)).toThrow(expect.objectContaining({ code: 'INTERNAL' }));
  });

  it('explain a refused deep page to the user', () => {
    expect(beyondMaxHits(DEFAULT_MAX_HITS)).toEqual(
      expect.objectContaining({ code: 'INVALID_ARGUMENT', detail: expect.stringContaining('first 1,000,000 matches') }),
    );
  });
});

describe('collections of an index', () => {
  const people = (snapshot: string) =>
    collectionName({ name: 'people', snapshot: `indexes/people/${snapshot}.parquet` });

  it('are named after the index and the snapshot', () => {
    expect(people('lx2a-0badc0de')).toBe('people__lx2a-0badc0de');
  });

  it('are deleted at a publish except the current and previous versions, and never another index', () => {
    const all = [
      people('a1-00000001'),
      people('a2-00000002'),
      people('a3-00000003'),
      people('a4-00000004'),
      'people__x__b1-00000005',
      'people2__c1-00000006',
      'people',
      'other__a1-00000007',
    ];
    expect(staleCollections(all, 'people', [people('a4-00000004'), people('a3-00000003')])).toEqual([
      people('a1-00000001'),
      people('a2-00000002'),
    ]);
    expect(staleCollections(all, 'people__x', [])).toEqual(['people__x__b1-00000005']);
  });
});

describe('import answers', () => {
  it('pass when every line succeeded', () => {
    expect(() => checkImport('{"success":true}\n{"success":true}', [0, 1])).not.toThrow();
  });

  it('fail on any refused line, naming how many and the first record', () => {
    const answer = [
      '{"success":true}',
      '{"success":false,"error":"Field `k2` must be an int64.","document":"{}"}',
      '{"success":false,"error":"other"}',
    ].join('\n');
    expect(() => checkImport(answer, [10, 11, 12])).toThrow(
      expect.objectContaining({
        code: 'INTERNAL',
        detail: expect.stringMatching(/refused 2 of 3 records; first, record 12: "Field `k2` must be an int64\."/),
      }),
    );
  });

  it('fail when lines are missing or unreadable', () => {
    expect(() => checkImport('{"success":true}', [0, 1])).toThrow(/1 results for an import of 2/);
    expect(() => checkImport('{"success":true}\n<html>', [0, 1])).toThrow(/record 2: unreadable answer/);
  });
});

describe('multi_search answers', () => {
  const hit = (json: string) => ({ document: { __json: json } });

  it('give the count and the records in order', () => {
    expect(
      readSearchResults(
        {
          results: [
            { found: 3, hits: [hit('{"a":1}'), hit('{"a":2}')] },
            { found: 3, hits: [] },
          ],
        },
        2,
      ),
    ).toEqual([
      { found: 3, records: ['{"a":1}', '{"a":2}'], facets: [] },
      { found: 3, records: [], facets: [] },
    ]);
  });

  it('give each ranked hit its text match, exact past 2^53 from text_match_info, and the facet counts', () => {
    const [result] = readSearchResults(
      {
        results: [
          {
            found: 2,
            hits: [
              { document: { __json: '{"a":1}' }, text_match: 1, text_match_info: { score: '1157451471441100800' } },
              { document: { __json: '{"a":2}' }, text_match: 578730123365187600 },
            ],
            facet_counts: [{ field_name: 'f0', counts: [{ value: 'vx', count: 2 }] }],
          },
        ],
      },
      1,
      true,
    );
    expect(result.scores).toEqual([Number(1157451471441100800n), 578730123365187600]);
    expect(result.facets).toEqual([{ field_name: 'f0', counts: [{ value: 'vx', count: 2 }] }]);
    expect(() => readSearchResults({ results: [{ found: 1, hits: [hit('{}')] }] }, 1, true)).toThrow(
      /ranked hit without its text match/,
    );
  });

  it('tell a collection loaded before ranking from one that is gone', () => {
    expect(() =>
      readSearchResults({ results: [{ code: 404, error: 'Could not find a field named `t0` in the schema.' }] }, 1),
    ).toThrow(/load the index again/);
  });

  it('turn an error reported inside the answer into an error, never an empty page', () => {
    expect(() => readSearchResults({ results: [{ code: 404, error: 'Not found.' }] }, 1)).toThrow(
      expect.objectContaining({ code: 'UNAVAILABLE' }),
    );
    expect(() =>
      readSearchResults({ results: [{ code: 400, error: 'Could not parse the filter query.' }] }, 1),
    ).toThrow(expect.objectContaining({ code: 'INTERNAL', detail: expect.stringContaining('Could not parse') }));
  });

  it('turn a search that ran out of time into a timeout, not a short page', () => {
    expect(() => readSearchResults({ results: [{ found: 1, hits: [hit('{}')], search_cutoff: true }] }, 1)).toThrow(
      expect.objectContaining({ code: 'TIMEOUT' }),
    );
  });

  it('refuse answers that do not fit the request', () => {
    expect(() => readSearchResults({ results: [] }, 1)).toThrow(/0 results for 1 searches/);
    expect(() => readSearchResults({}, 1)).toThrow(/no results/);
    expect(() => readSearchResults({ results: [{ found: 1, hits: [{ document: {} }] }] }, 1)).toThrow(
      /without its record/,
    );
  });
});

describe('client errors', () => {
  const http = (status: number, message = 'Request failed with HTTP code 400 | Server said: Bad JSON.') =>
    Object.assign(new Error(message), { httpStatus: status });

  it('tell an unreachable backend from a refusal, a timeout and an overload', () => {
    expect(backendError(new Error('connect ECONNREFUSED'), 'searching')).toMatchObject({ code: 'UNAVAILABLE' });
    expect(backendError(http(503), 'searching')).toMatchObject({ code: 'UNAVAILABLE' });
    expect(backendError(http(408), 'searching')).toMatchObject({ code: 'TIMEOUT' });
    expect(backendError(http(429), 'searching')).toMatchObject({ code: 'UNAVAILABLE', retryAfterSeconds: 1 });
    expect(backendError(http(400), 'importing')).toMatchObject({
      code: 'INTERNAL',
      detail: expect.stringContaining('(HTTP 400): "Request failed'),
    });
  });

  it('keep an AppError as it is', () => {
    const own = beyondMaxHits(10);
    expect(backendError(own, 'searching')).toBe(own);
  });
});
