import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { GenericContainer, Wait, type StartedTestContainer } from 'testcontainers';
import type { IndexEntry } from '@quarry/metadata-store';
import { parseQuery, type FieldDef } from '@quarry/query-language';
import { buildSnapshot, SnapshotEngine } from '@quarry/snapshots';
import { builtEntry, describeWithDocker } from '@quarry/testkit';
import type { SearchPlan } from '../../ports/search-index.port';
import { searchIndexConformance } from '../../search-index.conformance';
import { TypesenseSearchIndex } from './typesense-search-index.adapter';
import { collectionName } from './typesense-protocol';

const IMAGE = 'typesense/typesense:28.0';

describeWithDocker(`TypesenseSearchIndex conformance (testcontainers ${IMAGE})`, () => {
  let container: StartedTestContainer;
  const url = () => `http://${container.getHost()}:${container.getMappedPort(8108)}`;

  beforeAll(async () => {
    container = await new GenericContainer(IMAGE)
      .withCommand(['--data-dir', '/tmp', '--api-key', 'conformance-key'])
      .withExposedPorts(8108)
      .withWaitStrategy(Wait.forHttp('/health', 8108))
      .start();
  }, 180000);

  afterAll(async () => {
    await container?.stop();
  });

  // Small import batches: the keyset loading goes through several pages even on the small fixtures.
  searchIndexConformance(
    async (engine) => new TypesenseSearchIndex({ url: url(), apiKey: 'conformance-key' }, engine, { importBatch: 3 }),
    undefined,
    false,
  );

  describe('what only Typesense has', () => {
    let dataDir: string;
    let engine: SnapshotEngine;
    let index: TypesenseSearchIndex;
    const versions: IndexEntry[] = [];

    const load = async (version: number, count: number): Promise<IndexEntry> => {
      const file = path.join(dataDir, `deep-${version}.json`);
      fs.writeFileSync(
        file,
        JSON.stringify(Array.from({ length: count }, (_, i) => ({ n: i, parity: i % 2 === 0 ? 'even' : 'odd' }))),
      );
      const built = await buildSnapshot({ name: 'deep', file, dataDir, types: {}, views: [] });
      const e: IndexEntry = {
        name: 'deep',
        description: '',
        fields: built.fields,
        views: [],
        recordCount: built.recordCount,
        version,
        snapshot: built.snapshot,
        updatedAt: '',
      };
      await index.prepare(e);
      await index.retire(e, versions.at(-1) ?? null);
      versions.push(e);
      return e;
    };
    const plan = (e: IndexEntry, query: string, offset: number, limit: number): SearchPlan => ({
      where: parseQuery(query, { fields: e.fields as FieldDef[], now: 0 }),
      sort: [],
      offset,
      limit,
    });
    const numbers = (json: string) => (JSON.parse(json) as Array<{ n: number }>).map((r) => r.n);

    beforeAll(async () => {
      dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'q-ts-deep-'));
      engine = new SnapshotEngine(dataDir);
      index = new TypesenseSearchIndex({ url: url(), apiKey: 'conformance-key' }, engine, {
        maxHits: 10,
        importBatch: 7,
      });
    }, 120000);

    afterAll(async () => {
      if (versions.length) await index.drop(versions[versions.length - 1]);
      await engine.close();
    });

    it('pages the whole index past limit_hits by row number, refuses a filtered page past it, and answers an empty page past the end', async () => {
      const e = await load(1, 30);
      expect(numbers((await index.search(e, plan(e, '*', 20, 5))).recordsJson)).toEqual([20, 21, 22, 23, 24]);
      expect((await index.search(e, plan(e, '*', 20, 5))).total).toBe(30);
      await expect(index.search(e, plan(e, 'parity:even', 10, 2))).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
      expect(await index.search(e, plan(e, 'parity:even', 15, 2))).toEqual({
        total: 15,
        recordsJson: '[]',
        engine: 'typesense',
      });
      expect(numbers((await index.search(e, plan(e, 'parity:even', 6, 4))).recordsJson)).toEqual([12, 14, 16, 18]);
    });

    it('keeps the previous collection at a publish and deletes the one before it', async () => {
      const v1 = versions[0] ?? (await load(1, 30));
      const v2 = await load(2, 3);
      expect((await index.search(v1, plan(v1, '*', 0, 1))).total).toBe(30);
      const v3 = await load(3, 4);
      await expect(index.search(v1, plan(v1, '*', 0, 1))).rejects.toMatchObject({ code: 'UNAVAILABLE' });
      expect((await index.search(v2, plan(v2, '*', 0, 1))).total).toBe(3);
      expect((await index.search(v3, plan(v3, '*', 0, 1))).total).toBe(4);
    });
  });
});

interface Recorded {
  method: string;
  path: string;
  query: URLSearchParams;
  contentType: string | undefined;
  body: string;
}

type Answer = { status?: number; json?: unknown; text?: string };

/** A stand-in for a Typesense server that records what the adapter sends and answers as told. */
class RecordingTypesense {
  readonly requests: Recorded[] = [];
  answer: (r: Recorded) => Answer = () => ({ json: {} });
  private server!: http.Server;

  async start(): Promise<string> {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const url = new URL(req.url ?? '/', 'http://stub');
        const r: Recorded = {
          method: req.method ?? '',
          path: decodeURIComponent(url.pathname),
          query: url.searchParams,
          contentType: req.headers['content-type'],
          body: Buffer.concat(chunks).toString(),
        };
        this.requests.push(r);
        const a = this.answer(r);
        res.writeHead(a.status ?? 200, {
          'content-type': a.text !== undefined ? 'text/plain; charset=utf-8' : 'application/json; charset=utf-8',
        });
        res.end(a.text ?? JSON.stringify(a.json ?? {}));
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

const RECORDS = Array.from({ length: 8 }, (_, i) => ({
  name: `person ${i}`,
  city: i % 2 ? 'Leeds' : 'York',
  score: i * 10,
}));

describe('TypesenseSearchIndex requests (against a recording stand-in; no Docker needed)', () => {
  const stub = new RecordingTypesense();
  let url: string;
  let dataDir: string;
  let engine: SnapshotEngine;
  let entry: IndexEntry;
  let wide: IndexEntry;

  const adapter = (options = {}) =>
    new TypesenseSearchIndex({ url, apiKey: 'k' }, engine, { importBatch: 3, ...options });
  const plan = (e: IndexEntry, query: string, offset = 0, limit = 50, signal?: AbortSignal): SearchPlan => ({
    where: parseQuery(query, { fields: e.fields as FieldDef[], now: 0 }),
    sort: [],
    offset,
    limit,
    signal,
  });
  const build = async (name: string, records: unknown[]): Promise<IndexEntry> => {
    const file = path.join(dataDir, `${name}.json`);
    fs.writeFileSync(file, JSON.stringify(records));
    return builtEntry({ name, file, dataDir, types: {}, views: [] });
  };
  const searchesOf = (r: Recorded) => (JSON.parse(r.body) as { searches: Array<Record<string, unknown>> }).searches;
  const hits = (from: number, n: number) =>
    Array.from({ length: n }, (_, i) => ({ document: { __json: JSON.stringify({ n: from + i }) } }));

  beforeAll(async () => {
    url = await stub.start();
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'q-ts-stub-'));
    engine = new SnapshotEngine(dataDir);
    entry = await build('people', RECORDS);
    wide = await build(
      'wide',
      [0, 1].map(() => Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`f${i}`, 'filler']))),
    );
  });

  afterAll(async () => {
    await stub.stop();
    await engine.close();
  });

  beforeEach(() => {
    stub.requests.length = 0;
    stub.answer = () => ({ json: {} });
  });

  describe('prepare', () => {
    const importAnswer = (r: Recorded, fail?: number): Answer => ({
      text: r.body
        .split('\n')
        .map((line) =>
          fail !== undefined && (JSON.parse(line) as { __rowid: number }).__rowid === fail
            ? '{"success":false,"error":"Field `k2` must be an int64."}'
            : '{"success":true}',
        )
        .join('\n'),
    });

    it('creates a collection of int64 keys and imports JSONL batches with action=upsert', async () => {
      stub.answer = (r) => (r.path.endsWith('/import') ? importAnswer(r) : { status: 201, json: {} });
      await adapter().prepare(entry);
      const [create, ...imports] = stub.requests;
      expect(create.method).toBe('POST');
      expect(create.path).toBe('/collections');
      const schema = JSON.parse(create.body) as {
        name: string;
        default_sorting_field: string;
        fields: Array<{ type: string }>;
      };
      expect(schema.name).toBe(collectionName(entry));
      expect(schema.default_sorting_field).toBe('__rowid');
      expect(schema.fields.map((f) => f.type)).not.toContain('float');
      expect(imports.map((r) => [r.method, r.path, r.query.get('action'), r.body.split('\n').length])).toEqual([
        ['POST', `/collections/${collectionName(entry)}/documents/import`, 'upsert', 3],
        ['POST', `/collections/${collectionName(entry)}/documents/import`, 'upsert', 3],
        ['POST', `/collections/${collectionName(entry)}/documents/import`, 'upsert', 2],
      ]);
      expect(imports[0].contentType).toMatch(/^text\/plain/);
    });

    it('checks every answer line itself, names the first refused record and removes the half-loaded collection', async () => {
      stub.answer = (r) => (r.path.endsWith('/import') ? importAnswer(r, 4) : { status: 201, json: {} });
      await expect(adapter().prepare(entry)).rejects.toMatchObject({
        code: 'INTERNAL',
        detail: expect.stringContaining('refused 1 of 3 records; first, record 5'),
      });
      expect(stub.requests.at(-1)).toMatchObject({ method: 'DELETE', path: `/collections/${collectionName(entry)}` });
      expect(stub.requests.filter((r) => r.path.endsWith('/import'))).toHaveLength(2);
    });

    it('refuses an answer with fewer lines than documents', async () => {
      stub.answer = (r) => (r.path.endsWith('/import') ? { text: '{"success":true}' } : { status: 201, json: {} });
      await expect(adapter().prepare(entry)).rejects.toThrow(/1 results for an import of 3 documents/);
    });
  });

  describe('search', () => {
    it('POSTs one multi_search whose body carries the filter, however long, with every prefix expansion allowed', async () => {
      stub.answer = () => ({ json: { results: [{ found: 0, hits: [] }] } });
      const query = Array.from({ length: 10 }, (_, i) => `quarrystone${i}`).join(' ');
      await adapter().search(wide, plan(wide, query));
      expect(stub.requests).toHaveLength(1);
      const [r] = stub.requests;
      expect([r.method, r.path]).toEqual(['POST', '/multi_search']);
      expect(r.query.toString().length).toBeLessThan(100);
      const [s] = searchesOf(r);
      expect(s).toMatchObject({
        collection: collectionName(wide),
        q: '*',
        include_fields: '__json',
        max_filter_by_candidates: 4294967295,
        limit_hits: 1_000_000,
        offset: 0,
        limit: 50,
      });
      expect(String(s.filter_by).length).toBeGreaterThan(4000);
    });

    it('fetches a page of 600 as searches of at most 250 in one request, records in order', async () => {
      stub.answer = (r) => ({
        json: { results: searchesOf(r).map((s) => ({ found: 1000, hits: hits(Number(s.offset), Number(s.limit)) })) },
      });
      const page = await adapter().search(entry, plan(entry, 'york', 100, 600));
      expect(searchesOf(stub.requests[0]).map((s) => [s.offset, s.limit])).toEqual([
        [100, 250],
        [350, 250],
        [600, 100],
      ]);
      expect(page.total).toBe(1000);
      expect((JSON.parse(page.recordsJson) as Array<{ n: number }>).map((x) => x.n)).toEqual(
        Array.from({ length: 600 }, (_, i) => 100 + i),
      );
    });

    it('turns a search cut off by time into a timeout and a missing collection into a retry, never a short page', async () => {
      stub.answer = () => ({ json: { results: [{ found: 9, hits: hits(0, 1), search_cutoff: true }] } });
      await expect(adapter().search(entry, plan(entry, 'york'))).rejects.toMatchObject({ code: 'TIMEOUT' });
      stub.answer = () => ({ json: { results: [{ code: 404, error: 'Not found.' }] } });
      await expect(adapter().search(entry, plan(entry, 'york'))).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    });

    it('reports a backend that does not answer as unavailable', async () => {
      const down = new TypesenseSearchIndex({ url: 'http://127.0.0.1:1', apiKey: 'k' }, engine);
      await expect(down.search(entry, plan(entry, 'york'))).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    });

    it('sends nothing for a call whose deadline already passed', async () => {
      const controller = new AbortController();
      controller.abort();
      await expect(adapter().search(entry, plan(entry, 'york', 0, 5, controller.signal))).rejects.toMatchObject({
        code: 'TIMEOUT',
      });
      expect(stub.requests).toHaveLength(0);
    });

    it('past limit_hits: counts, then answers an empty page past the end or refuses with a 400', async () => {
      stub.answer = () => ({ json: { results: [{ found: 15, hits: [] }] } });
      expect(await adapter({ maxHits: 10 }).search(entry, plan(entry, 'york', 20, 5))).toEqual({
        total: 15,
        recordsJson: '[]',
        engine: 'typesense',
      });
      expect(searchesOf(stub.requests[0]).map((s) => s.limit)).toEqual([0]);
      stub.answer = () => ({ json: { results: [{ found: 100, hits: [] }] } });
      await expect(adapter({ maxHits: 10 }).search(entry, plan(entry, 'york', 20, 5))).rejects.toMatchObject({
        code: 'INVALID_ARGUMENT',
      });
    });

    it('past limit_hits in record order: a row-number range and a count, no deep offset', async () => {
      stub.answer = (r) => ({
        json: {
          results: searchesOf(r).map((s) => ({
            found: s.limit === 0 ? 30 : 5,
            hits: s.limit === 0 ? [] : hits(20, 5),
          })),
        },
      });
      const page = await adapter({ maxHits: 10 }).search(entry, plan(entry, '*', 20, 5));
      expect(searchesOf(stub.requests[0]).map((s) => [s.filter_by, s.offset, s.limit])).toEqual([
        [undefined, 0, 0],
        ['__rowid:[20..24]', 0, 5],
      ]);
      expect(page.total).toBe(30);
    });
  });

  describe('publish and drop', () => {
    const ids = ['a1-00000001', 'a2-00000002', 'a3-00000003', 'a4-00000004'];
    const version = (i: number): IndexEntry => ({
      ...entry,
      version: i + 1,
      snapshot: `indexes/people/${ids[i]}.parquet`,
    });

    it('points the alias at the new version, keeps the previous collection and deletes the older ones', async () => {
      stub.answer = (r) =>
        r.method === 'GET'
          ? {
              json: [
                ...ids.map((id) => ({ name: `people__${id}` })),
                { name: 'people__x__b1-00000009' },
                { name: 'peoplex__a1-00000001' },
              ],
            }
          : { json: {} };
      await adapter().retire(version(3), version(2));
      expect(stub.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
        'PUT /aliases/people',
        'GET /collections',
        'DELETE /collections/people__a1-00000001',
        'DELETE /collections/people__a2-00000002',
      ]);
      expect(JSON.parse(stub.requests[0].body)).toEqual({ collection_name: 'people__a4-00000004' });
    });

    it('drops the alias and every collection of the index', async () => {
      stub.answer = (r) =>
        r.method === 'GET'
          ? { json: [{ name: 'people__a3-00000003' }, { name: 'people__a4-00000004' }, { name: 'other__a1-00000001' }] }
          : { json: {} };
      await adapter().drop(version(3));
      expect(stub.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
        'DELETE /aliases/people',
        'GET /collections',
        'DELETE /collections/people__a3-00000003',
        'DELETE /collections/people__a4-00000004',
      ]);
    });
  });
});
