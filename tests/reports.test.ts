import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createIdentity, type Identity } from './support/identities';
import { startQuarry } from './support/quarry-process';
import { startStackWithData, unwrap, type RpcResult, type Stack } from './support/stack';
import { rpcClient } from './support/http';

interface ReportSummary {
  guid: string;
  name: string;
  description: string;
  type: string;
  index: string;
  owner: string;
  folder: string;
  shared: boolean;
  createdAt: string;
  updatedAt: string;
}
interface Found {
  reports: ReportSummary[];
  nextCursor: string | null;
}
interface Metadata extends ReportSummary {
  method: string;
  params: Record<string, unknown>;
}

describe('saved reports end to end', () => {
  let stack: Stack;
  let ann: Identity;
  let bob: Identity;
  let reader: Identity;

  beforeAll(async () => {
    stack = await startStackWithData();
    ann = await createIdentity(stack.dataDir, 'ann', { indexes: '*' });
    bob = await createIdentity(stack.dataDir, 'bob', { indexes: '*' });
    reader = await createIdentity(stack.dataDir, 'reader', { indexes: '*', scopes: 'query:execute,reports:read' });
  }, 120000);

  afterAll(async () => {
    await stack?.quarry.stop();
  });

  const call = <T>(who: Identity, method: string, params: unknown) => stack.call<T>(who, method, params);
  const find = (who: Identity, params: Record<string, unknown>) => call<Found>(who, 'REPORTS.FIND', params);

  it('saves a query and re-executes it from its metadata with the same result', async () => {
    const params = {
      index: 'movies',
      query: '(Major Genre):drama',
      pageSize: 5,
      sort: [{ field: 'IMDB Rating', direction: 'DESC' }],
    };
    const saved = await call<Record<string, unknown> & { report: { guid: string } }>(ann, 'QUERIES.EXECUTE', {
      ...params,
      saveReport: { name: 'Best dramas', description: 'Top rated dramas', folder: 'films' },
    });
    expect(saved.error).toBeUndefined();
    const guid = saved.data!.report.guid;
    expect(guid).toMatch(/^[0-9a-f-]{36}$/);

    const meta = await call<Metadata>(ann, 'REPORTS.METADATA', { guid });
    expect(meta.data).toMatchObject({
      guid,
      name: 'Best dramas',
      description: 'Top rated dramas',
      type: 'query',
      index: 'movies',
      owner: 'ann',
      method: 'QUERIES.EXECUTE',
    });
    expect(meta.data!.params).toEqual({
      index: 'movies',
      query: '(Major Genre):drama',
      page: 1,
      pageSize: 5,
      sort: [{ field: 'IMDB Rating', direction: 'desc' }],
    });
    expect(meta.data!.params).not.toHaveProperty('saveReport');

    const again = await call<Record<string, unknown>>(ann, meta.data!.method, meta.data!.params);
    const { report: _r, ...original } = saved.data!;
    expect(again.data).toEqual(original);
  });

  it('saves an HTML crosstab with its defaults filled in, and re-executes it', async () => {
    const params = {
      index: 'movies',
      rows: ['Major Genre'],
      columns: [{ field: 'MPAA Rating' }],
      totals: [{ aggregationType: 'Count' }],
    };
    const saved = await call<{ data: string; report: { guid: string } }>(ann, 'CROSSTAB.EXECUTE', {
      ...params,
      saveReport: { name: 'Genres by rating', shared: true },
    });
    expect(saved.error).toBeUndefined();
    const meta = await call<Metadata>(ann, 'REPORTS.METADATA', { guid: saved.data!.report.guid });
    expect(meta.data).toMatchObject({ type: 'crosstab', method: 'CROSSTAB.EXECUTE', shared: true });
    expect(meta.data!.params).toEqual({ ...params, query: '*', columns: [{ field: 'MPAA Rating', reverse: false }] });
    const again = await call<{ data: string }>(ann, meta.data!.method, meta.data!.params);
    expect(again.data!.data).toBe(saved.data!.data);
  });

  it('finds by words of name and description, and by type', async () => {
    expect((await find(ann, { search: 'DRAMAS' })).data!.reports.map((r) => r.name)).toEqual(['Best dramas']);
    expect((await find(ann, { search: 'genres rating' })).data!.reports.map((r) => r.name)).toEqual([
      'Genres by rating',
    ]);
    expect((await find(ann, { types: ['crosstab'] })).data!.reports.map((r) => r.type)).toEqual(['crosstab']);
    expect((await find(ann, { types: ['query', 'crosstab'] })).data!.reports.length).toBe(2);
    const bad = await find(ann, { types: ['chart'] });
    expect(bad.error).toMatchObject({
      code: 400,
      data: { detail: 'types may hold only query and crosstab, got "chart"' },
    });
  });

  it('shows other users only shared reports: 404 on private ones', async () => {
    const mine = (await find(ann, {})).data!.reports;
    const priv = mine.find((r) => !r.shared)!;
    const shared = mine.find((r) => r.shared)!;
    expect((await call(bob, 'REPORTS.METADATA', { guid: priv.guid })).error).toMatchObject({ code: 404 });
    expect((await call<Metadata>(bob, 'REPORTS.METADATA', { guid: shared.guid })).data?.name).toBe('Genres by rating');
    expect((await find(bob, {})).data!.reports.map((r) => r.guid)).toEqual([shared.guid]);
  });

  it('answers a malformed guid with 400 and an unknown one with 404', async () => {
    expect((await call(ann, 'REPORTS.METADATA', { guid: 'not-a-guid' })).error).toMatchObject({
      code: 400,
      data: { detail: 'guid is not a valid report id' },
    });
    expect((await call(ann, 'REPORTS.METADATA', { guid: '00000000-0000-4000-8000-000000000000' })).error?.code).toBe(
      404,
    );
    expect((await call(ann, 'REPORTS.METADATA', {})).error).toMatchObject({
      code: 400,
      data: { detail: 'guid is required' },
    });
  });

  it('refuses a save without reports:write with 403 and saves nothing', async () => {
    const before = (await find(ann, { search: 'forbidden' })).data!.reports.length;
    const res = await call(reader, 'QUERIES.EXECUTE', { index: 'movies', saveReport: { name: 'forbidden save' } });
    expect(res.error).toMatchObject({ code: 403, data: { detail: 'Token lacks the required scope "reports:write"' } });
    const all = await find(ann, { search: 'forbidden' });
    expect(all.data!.reports.length).toBe(before);
    expect((await find(reader, { search: 'forbidden' })).data!.reports).toEqual([]);
  });

  it('validates saveReport before running anything', async () => {
    expect((await call(ann, 'QUERIES.EXECUTE', { index: 'movies', saveReport: { name: '' } })).error?.data.detail).toBe(
      'saveReport.name is required',
    );
    expect(
      (await call(ann, 'QUERIES.EXECUTE', { index: 'movies', saveReport: { name: 'x', colour: 'red' } })).error?.data
        .detail,
    ).toBe('Unknown parameter in saveReport: "colour"');
    expect(
      (await call(ann, 'QUERIES.EXECUTE', { index: 'movies', saveReport: { name: 'x'.repeat(201) } })).error?.code,
    ).toBe(400);
  });

  it('answers 409 to a duplicate name, and exactly one 409 when two saves race', async () => {
    const dup = await call(ann, 'QUERIES.EXECUTE', { index: 'movies', saveReport: { name: 'best DRAMAS' } });
    expect(dup.error).toMatchObject({ code: 409, message: 'Conflict' });
    expect(
      (await call(bob, 'QUERIES.EXECUTE', { index: 'movies', saveReport: { name: 'Best dramas' } })).error,
    ).toBeUndefined();
    const race = await Promise.all(
      [1, 2, 3].map(() => call(ann, 'QUERIES.EXECUTE', { index: 'flights', saveReport: { name: 'Race' } })),
    );
    expect(race.filter((r) => r.error === undefined)).toHaveLength(1);
    expect(race.filter((r) => r.error?.code === 409)).toHaveLength(2);
    expect((await find(ann, { search: 'race' })).data!.reports).toHaveLength(1);
  });

  it('pages through 250 reports 20 at a time, each exactly once, while others are saved', async () => {
    const carol = await createIdentity(stack.dataDir, 'carol', { indexes: '*' });
    for (let i = 0; i < 250; i += 25) {
      await Promise.all(
        Array.from({ length: 25 }, (_, j) =>
          call(carol, 'QUERIES.EXECUTE', { index: 'flights', pageSize: 1, saveReport: { name: `Report ${i + j}` } }),
        ),
      );
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    let extra = 0;
    do {
      const page: RpcResult<Found> = await find(carol, { limit: 20, ...(cursor ? { cursor } : {}) });
      expect(page.error).toBeUndefined();
      expect(page.data!.reports.length).toBeLessThanOrEqual(20);
      seen.push(...page.data!.reports.map((r) => r.name));
      cursor = page.data!.nextCursor;
      // Others keep saving while we page: none of them may disturb the walk.
      await call(carol, 'QUERIES.EXECUTE', { index: 'flights', pageSize: 1, saveReport: { name: `Late ${extra++}` } });
    } while (cursor);
    const walked = seen.filter((n) => n.startsWith('Report '));
    expect(walked).toHaveLength(250);
    expect(new Set(walked).size).toBe(250);
    expect(seen.filter((n) => n.startsWith('Late '))).toHaveLength(0);
    expect(walked[0]).toMatch(/^Report 2[2-4]\d$/);
  });

  it('refuses a forged or rebound cursor', async () => {
    const first = await find(ann, { limit: 1 });
    const cursor = first.data!.nextCursor!;
    expect((await find(ann, { limit: 1, cursor: cursor.slice(0, -2) + 'xx' })).error?.code).toBe(400);
    expect((await find(ann, { limit: 1, cursor, search: 'other' })).error?.data.detail).toMatch(/different search/);
  });

  // Runs last: its shared report would otherwise show up in the other tests' exact listings.
  it('shows a shared report only to users who may read its index; to others it does not exist', async () => {
    const amy = await createIdentity(stack.dataDir, 'amy', { indexes: 'movies,flights' });
    const ben = await createIdentity(stack.dataDir, 'ben', { indexes: 'movies' });
    const cat = await createIdentity(stack.dataDir, 'cat', { indexes: '*' });
    const saved = await call<{ report: { guid: string } }>(amy, 'CROSSTAB.EXECUTE', {
      index: 'flights',
      query: 'origin:SFO',
      rows: ['destination'],
      totals: [{ aggregationType: 'Count' }],
      saveReport: { name: 'Delays from SFO', description: 'where SFO flies', shared: true },
    });
    expect(saved.error).toBeUndefined();
    const guid = saved.data!.report.guid;

    const benSees = await find(ben, {});
    expect(benSees.error).toBeUndefined();
    expect(benSees.data!.reports.map((r) => r.guid)).not.toContain(guid);
    expect(benSees.data!.reports.length).toBeGreaterThan(0);
    expect((await find(ben, { search: 'SFO' })).data).toEqual({ reports: [], nextCursor: null });
    const hidden = await call(ben, 'REPORTS.METADATA', { guid });
    const random = randomUUID();
    const missing = await call(ben, 'REPORTS.METADATA', { guid: random });
    expect(missing.error?.code).toBe(404);
    // The same answer as for a guid that never existed, down to the wording.
    expect(hidden.error).toEqual({
      ...missing.error,
      data: { ...missing.error!.data, detail: missing.error!.data.detail.replace(random, guid) },
    });
    expect(JSON.stringify(hidden)).not.toMatch(/flights|SFO|amy/);

    expect((await find(cat, { search: 'SFO' })).data!.reports).toMatchObject([
      { guid, index: 'flights', owner: 'amy' },
    ]);
    expect((await call<Metadata>(cat, 'REPORTS.METADATA', { guid })).data).toMatchObject({
      guid,
      index: 'flights',
      params: { query: 'origin:SFO' },
    });
    expect((await find(amy, { search: 'SFO' })).data!.reports.map((r) => r.guid)).toEqual([guid]);
  });
});

describe('saved reports survive a crash', () => {
  it('keeps a report acknowledged right before kill -9', async () => {
    const stack = await startStackWithData();
    const ann = await createIdentity(stack.dataDir, 'ann', { indexes: '*' });
    const saved = await stack.call<{ report: { guid: string } }>(ann, 'QUERIES.EXECUTE', {
      index: 'movies',
      saveReport: { name: 'Durable' },
    });
    await stack.quarry.kill();
    const again = await startQuarry({ topology: 'all', dataDir: stack.dataDir });
    try {
      const meta = unwrap<Metadata>(
        await rpcClient(again.baseUrl, ann.token).call('REPORTS.METADATA', { guid: saved.data!.report.guid }),
      );
      expect(meta.data?.name).toBe('Durable');
    } finally {
      await again.stop();
    }
  }, 120000);
});

describe('report export and import between deployments', () => {
  it('moves reports with their guids, matching owners by name', async () => {
    const a = await startStackWithData();
    const ann = await createIdentity(a.dataDir, 'ann', { indexes: '*' });
    const saved = await a.call<{ report: { guid: string } }>(ann, 'QUERIES.EXECUTE', {
      index: 'movies',
      query: 'war',
      saveReport: { name: 'War films', shared: true },
    });
    await a.quarry.stop();
    const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-export-')), 'reports.jsonl');
    expect((await a.cli(['report', 'export', '--out', out])).code).toBe(0);
    const lines = fs.readFileSync(out, 'utf8').trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0])).toMatchObject({ guid: saved.data!.report.guid, ownerName: 'ann', name: 'War films' });

    const b = await startStackWithData();
    try {
      const noOwner = await b.cli(['report', 'import', out]);
      expect(noOwner.stdout).toContain('no user named "ann" here');
      const ann2 = await createIdentity(b.dataDir, 'ann', { indexes: '*' });
      const ok = await b.cli(['report', 'import', out]);
      expect(ok.stdout).toContain('imported 1 report(s)');
      expect((await b.cli(['report', 'import', out])).stdout).toContain('skipped 1 already present');
      const meta = await b.call<Metadata>(ann2, 'REPORTS.METADATA', { guid: saved.data!.report.guid });
      expect(meta.data).toMatchObject({ name: 'War films', owner: 'ann', params: { index: 'movies', query: 'war' } });
      const list = await b.cli(['report', 'list', '--user', 'ann']);
      expect(list.stdout).toContain('War films');
      expect((await b.cli(['report', 'delete', saved.data!.report.guid])).code).toBe(0);
      expect((await b.call(ann2, 'REPORTS.METADATA', { guid: saved.data!.report.guid })).error?.code).toBe(404);
    } finally {
      await b.quarry.stop();
    }
    // A hang guard: two stacks loaded and started one after the other, on a loaded machine.
  }, 480_000);
});
