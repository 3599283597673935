import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import type { IndexEntry } from '@quarry/metadata-store';
import { parseQuery, type FieldDef } from '@quarry/query-language';
import { SnapshotEngine } from '@quarry/snapshots';
import { builtEntry } from '@quarry/testkit';
import type { SortKey } from '../../ports/search-index.port';
import { searchIndexConformance } from '../../search-index.conformance';
import { DuckDbSearchIndex, ONE_PASS_MAX_RECORDS } from './duckdb-search-index.adapter';

describe('DuckDbSearchIndex conformance: small indexes searched in memory', () => {
  searchIndexConformance(async (engine) => new DuckDbSearchIndex(engine, { awaitMemory: true }));
});

describe('DuckDbSearchIndex conformance: every search in SQL', () => {
  searchIndexConformance(async (engine) => new DuckDbSearchIndex(engine, { inMemoryMaxRecords: 0 }));
});

describe('DuckDbSearchIndex conformance: every search in SQL on snapshots attached from their DuckDB file', () => {
  searchIndexConformance(async (engine) => new DuckDbSearchIndex(engine, { inMemoryMaxRecords: 0 }), 'attached');
});

describe('DuckDbSearchIndex: one statement (small index) and two (large) give the same pages', () => {
  // Real data: movies.json, searched through both paths with random queries, sorts and pages.
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'q-onepass-'));
  const engine = new SnapshotEngine(dataDir);
  const search = new DuckDbSearchIndex(engine);
  let small: IndexEntry;
  let fields: FieldDef[];

  beforeAll(async () => {
    const file = path.join(
      __dirname,
      '..',
      '..',
      '..',
      '..',
      '..',
      'node_modules',
      'vega-datasets',
      'data',
      'movies.json',
    );
    small = await builtEntry({ name: 'movies', file, dataDir, types: {}, views: [] });
    fields = small.fields as FieldDef[];
    expect(small.recordCount).toBeLessThanOrEqual(ONE_PASS_MAX_RECORDS);
  }, 60000);

  afterAll(async () => {
    await engine.close();
  });

  const WORDS = ['love', 'star', 'the', 'drama', 'comedy', 'warner', 'spielberg', 'night', 'r', 'pg'];
  const leaf = fc.oneof(
    fc.constantFrom(...WORDS),
    fc.constantFrom(...WORDS).map((w) => `${w.slice(0, 2)}*`),
    fc
      .tuple(fc.constantFrom('(Major Genre)', 'Director', '(MPAA Rating)', 'Distributor'), fc.constantFrom(...WORDS))
      .map(([f, w]) => `${f}:${w}`),
    fc
      .tuple(fc.integer({ min: 1, max: 9 }), fc.integer({ min: 0, max: 3 }))
      .map(([lo, d]) => `(IMDB Rating):[${lo} TO ${lo + d}]`),
    fc.integer({ min: 0, max: 300_000_000 }).map((n) => `(US Gross):>${n}`),
    fc.constant('*'),
  );
  const query = fc.letrec<{ q: string }>((tie) => ({
    q: fc.oneof(
      { depthSize: 'small' },
      leaf,
      fc.tuple(tie('q'), fc.constantFrom('AND', 'OR'), tie('q')).map(([a, op, b]) => `(${a}) ${op} (${b})`),
      tie('q').map((a) => `NOT (${a})`),
    ),
  })).q;
  const sortKey = fc.constantFrom<SortKey[]>(
    [],
    [{ field: 'Title', type: 'string', direction: 'asc' }],
    [{ field: 'IMDB Rating', type: 'number', direction: 'desc' }],
    [
      { field: 'Release Date', type: 'date', direction: 'asc' },
      { field: 'Title', type: 'string', direction: 'desc' },
    ],
  );

  it('random queries, sorts and pages (past the end too): same total, same records in the same order', async () => {
    await fc.assert(
      fc.asyncProperty(
        query,
        sortKey,
        fc.integer({ min: 0, max: 4000 }),
        fc.integer({ min: 1, max: 60 }),
        async (q, sort, offset, limit) => {
          const where = parseQuery(q, { fields, now: Date.UTC(2026, 10, 22) });
          const plan = { where, sort: sort.filter((s) => fields.some((f) => f.name === s.field)), offset, limit };
          const one = await search.search(small, plan);
          const two = await search.search({ ...small, recordCount: ONE_PASS_MAX_RECORDS + 1 }, plan);
          expect(one).toEqual(two);
        },
      ),
      { numRuns: 150 },
    );
  }, 120000);
});
