import fs from 'node:fs';
import path from 'node:path';
import { createIdentity, type Identity } from './support/identities';
import { makeDataDir, runCli, startQuarry, type RunningQuarry } from './support/quarry-process';

/*
 * Issue #26: saved reports over time, end to end over JSON-RPC on one all-in-one stack. A small index
 * whose numbers are known by heart is loaded, reports are saved on it, the index is reloaded with other
 * numbers under the running server, and every answer is checked against the numbers of the right load.
 */

interface RpcError {
  code: number;
  message: string;
  data: { type: string; detail: string };
}
interface Answer<T> {
  data?: T;
  meta?: { requestId: string; cache?: string };
  error?: RpcError;
}
interface JsonTable {
  rows: Array<{ key: unknown[]; total: Array<number | null> }>;
  grandTotal: Array<number | null>;
}
interface Ran {
  report: { guid: string; version: number };
  indexVersion: number;
  contentType?: string;
  data?: unknown;
  total?: number;
  records?: Array<Record<string, unknown>>;
  page?: number;
  pageSize?: number;
}

const FIRST = ['region,product,amount', 'east,a,10', 'east,b,5', 'west,a,7', 'north,c,1'].join('\n');
const SECOND = ['region,product,amount', 'east,a,100', 'west,a,1', 'west,b,2'].join('\n');

describe('REPORTS.EXECUTE: a saved report run by reference', () => {
  let quarry: RunningQuarry;
  let env: Record<string, string>;
  let dir: string;
  let ann: Identity;
  let bob: Identity;
  let eve: Identity;
  let noQuery: Identity;

  const load = async (name: string, csv: string) => {
    const file = path.join(dir, `${name}-${Date.now()}.csv`);
    fs.writeFileSync(file, csv);
    const res = await runCli(['index', 'load', name, file], env);
    if (res.code !== 0) throw new Error(`index load ${name} failed: ${res.stderr}`);
  };

  beforeAll(async () => {
    const dataDir = makeDataDir();
    dir = fs.mkdtempSync(path.join(dataDir, 'src-'));
    env = { QUARRY_DATA_DIR: dataDir };
    await load('sales', FIRST);
    await load('other', 'x\n1');
    ann = await createIdentity(dataDir, 'ann', { indexes: '*' });
    // bob reads sales through a realm: only the east rows.
    bob = await createIdentity(dataDir, 'bob', {
      indexes: 'sales',
      realms: [{ index: 'sales', query: 'region:east' }],
    });
    eve = await createIdentity(dataDir, 'eve', { indexes: 'other' });
    noQuery = await createIdentity(dataDir, 'nq', { indexes: '*', scopes: 'reports:read' });
    quarry = await startQuarry({ topology: 'all', dataDir, env });
  }, 120000);

  afterAll(async () => {
    await quarry?.stop();
  });

  const call = async <T>(who: Identity, method: string, params: unknown): Promise<Answer<T>> => {
    const res = await fetch(`${quarry.baseUrl}/api/v1`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${who.token}` },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    });
    const body = (await res.json()) as { result?: { data: T; meta: Answer<T>['meta'] }; error?: RpcError };
    return { data: body.result?.data, meta: body.result?.meta, error: body.error };
  };
  const ok = async <T>(who: Identity, method: string, params: unknown): Promise<T> => {
    const res = await call<T>(who, method, params);
    if (res.error) throw new Error(`${method} ${JSON.stringify(params)}: ${JSON.stringify(res.error)}`);
    return res.data as T;
  };
  const totalsByRegion = (t: JsonTable) => Object.fromEntries(t.rows.map((r) => [String(r.key[0]), r.total[0]]));

  const byRegion = {
    index: 'sales',
    rows: ['region'],
    totals: [{ aggregationType: 'Sum', field: 'amount' }],
    format: 'json',
  };
  let crosstabGuid = '';
  let queryGuid = '';
  let privateGuid = '';

  it('runs a shared crosstab report with each caller’s own realms, never its owner’s', async () => {
    const saved = await ok<{ report: { guid: string } }>(ann, 'CROSSTAB.EXECUTE', {
      ...byRegion,
      saveReport: { name: 'Sales by region', shared: true },
    });
    crosstabGuid = saved.report.guid;

    const asAnn = await ok<Ran>(ann, 'REPORTS.EXECUTE', { guid: crosstabGuid });
    expect(asAnn.report).toEqual({ guid: crosstabGuid, version: 1 });
    expect(asAnn.indexVersion).toBe(1);
    expect(asAnn.contentType).toBe('application/json');
    expect(totalsByRegion(asAnn.data as JsonTable)).toEqual({ east: 15, west: 7, north: 1 });
    expect((asAnn.data as JsonTable).grandTotal).toEqual([23]);

    // The same report, run by bob: his realm (region:east) applies, ann's rights are not lent.
    const asBob = await ok<Ran>(bob, 'REPORTS.EXECUTE', { guid: crosstabGuid });
    expect(totalsByRegion(asBob.data as JsonTable)).toEqual({ east: 15 });
    expect((asBob.data as JsonTable).grandTotal).toEqual([15]);
    // And it is exactly what CROSSTAB.EXECUTE answers bob with the saved params.
    const direct = await ok<{ data: JsonTable }>(bob, 'CROSSTAB.EXECUTE', byRegion);
    expect(asBob.data).toEqual(direct.data);
  });

  it('runs a query report with page and pageSize overrides, as QUERIES.EXECUTE would', async () => {
    const saved = await ok<{ report: { guid: string } }>(ann, 'QUERIES.EXECUTE', {
      index: 'sales',
      query: 'amount:>1',
      pageSize: 2,
      sort: [{ field: 'amount', direction: 'desc' }],
      saveReport: { name: 'Big sales' },
    });
    queryGuid = saved.report.guid;
    const ran = await ok<Ran>(ann, 'REPORTS.EXECUTE', { guid: queryGuid });
    expect(ran).toMatchObject({ total: 3, page: 1, pageSize: 2, report: { guid: queryGuid, version: 1 } });
    expect(ran.records!.map((r) => r.amount)).toEqual([10, 7]);
    const second = await ok<Ran>(ann, 'REPORTS.EXECUTE', { guid: queryGuid, page: 2 });
    expect(second.records!.map((r) => r.amount)).toEqual([5]);
    const wide = await ok<Ran>(ann, 'REPORTS.EXECUTE', { guid: queryGuid, pageSize: 10 });
    expect(wide.records!.map((r) => r.amount)).toEqual([10, 7, 5]);
  });

  it('draws a crosstab report in another format or image format when asked', async () => {
    const csv = await ok<Ran>(ann, 'REPORTS.EXECUTE', { guid: crosstabGuid, format: 'csv' });
    expect(csv.contentType).toBe('text/csv');
    expect(String(csv.data)).toContain('east');
    const chart = await ok<{ report: { guid: string } }>(ann, 'CROSSTAB.EXECUTE', {
      index: 'sales',
      rows: ['region'],
      totals: [{ aggregationType: 'Sum', field: 'amount' }],
      chartType: 'Pie2D',
      imageFormat: 'svg',
      saveReport: { name: 'Sales pie' },
    });
    const svg = await ok<Ran>(ann, 'REPORTS.EXECUTE', { guid: chart.report.guid });
    expect(svg.contentType).toBe('image/svg+xml');
    expect(String(svg.data)).toMatch(/^<svg/);
    const table = await ok<Ran>(ann, 'REPORTS.EXECUTE', { guid: chart.report.guid, format: 'html' });
    expect(table.contentType).toBe('text/html');
    expect(String(table.data)).toContain('<table');
  });

  it('refuses overrides that do not fit the report, naming them', async () => {
    const detail = async (params: Record<string, unknown>) => {
      const res = await call(ann, 'REPORTS.EXECUTE', params);
      return `${res.error?.code}: ${res.error?.data.detail}`;
    };
    expect(await detail({ guid: crosstabGuid, page: 2 })).toMatch(/^400: page goes with query reports/);
    expect(await detail({ guid: crosstabGuid, imageFormat: 'svg' })).toMatch(/^400: imageFormat goes with chart/);
    expect(await detail({ guid: queryGuid, format: 'csv' })).toMatch(/^400: format goes with crosstab reports/);
    expect(await detail({ guid: crosstabGuid, format: 'pdf' })).toMatch(/^400: format must be one of/);
    expect(await detail({ guid: crosstabGuid, format: 'csv', imageFormat: 'png' })).toMatch(/^400: imageFormat/);
    expect(await detail({ guid: crosstabGuid, asOf: 'yesterday' })).toMatch(/^400: asOf must be one of "latest"/);
    expect(await detail({ guid: crosstabGuid, pageSize: 5000 })).toMatch(/^400: pageSize must be an integer/);
    expect(await detail({ guid: crosstabGuid, surprise: 1 })).toMatch(/^400: .*surprise/);
    expect(await detail({})).toMatch(/^400: guid is required/);
    expect(await detail({ guid: 'not a guid' })).toBe('400: guid is not a valid report id');
    for (const version of [0, -1, 1.5, 2 ** 31, '1'])
      expect(await detail({ guid: crosstabGuid, version })).toMatch(/^400: version must be an integer between 1 and/);
    expect(await detail({ guid: crosstabGuid, version: 99 })).toBe(
      `404: Report ${crosstabGuid} has no version 99 (it has version 1 only)`,
    );
  });

  it('answers another user’s private report exactly as an unknown guid, and a shared one on an unreadable index too', async () => {
    const saved = await ok<{ report: { guid: string } }>(ann, 'QUERIES.EXECUTE', {
      index: 'sales',
      saveReport: { name: 'Private sales' },
    });
    privateGuid = saved.report.guid;
    const unknown = '6f1c2a9e-0b7d-4c1e-9a3f-2d5e8b7c4a10';
    const shape = (res: Answer<unknown>, guid: string) => JSON.stringify(res.error).split(guid).join('<guid>');
    const forUnknown = shape(await call(bob, 'REPORTS.EXECUTE', { guid: unknown }), unknown);
    expect(forUnknown).toBe(
      JSON.stringify({
        code: 404,
        message: 'Not Found',
        data: { type: 'about:blank', detail: 'Report <guid> not found' },
      }),
    );
    expect(shape(await call(bob, 'REPORTS.EXECUTE', { guid: privateGuid }), privateGuid)).toBe(forUnknown);
    // eve may not read sales: the shared report is as unknown to her.
    expect(shape(await call(eve, 'REPORTS.EXECUTE', { guid: crosstabGuid }), crosstabGuid)).toBe(forUnknown);
    expect(shape(await call(eve, 'REPORTS.METADATA', { guid: crosstabGuid }), crosstabGuid)).toBe(forUnknown);
  });

  it('needs query:execute besides reports:read', async () => {
    const res = await call(noQuery, 'REPORTS.EXECUTE', { guid: crosstabGuid });
    expect(res.error).toMatchObject({ code: 403, data: { detail: 'Token lacks the required scope "query:execute"' } });
    // reports:read alone still loads the metadata.
    expect((await call(noQuery, 'REPORTS.METADATA', { guid: crosstabGuid })).error).toBeUndefined();
  });

  it('runs on the latest load by default, and on the load it was saved on with asOf "saved"', async () => {
    await load('sales', SECOND);
    const latest = await ok<Ran>(ann, 'REPORTS.EXECUTE', { guid: crosstabGuid, asOf: 'latest' });
    expect(latest.indexVersion).toBe(2);
    expect(totalsByRegion(latest.data as JsonTable)).toEqual({ east: 100, west: 3 });
    const saved = await ok<Ran>(ann, 'REPORTS.EXECUTE', { guid: crosstabGuid, asOf: 'saved' });
    expect(saved.indexVersion).toBe(1);
    expect(totalsByRegion(saved.data as JsonTable)).toEqual({ east: 15, west: 7, north: 1 });
    // Realms still apply on the old snapshot.
    const bobSaved = await ok<Ran>(bob, 'REPORTS.EXECUTE', { guid: crosstabGuid, asOf: 'saved' });
    expect(totalsByRegion(bobSaved.data as JsonTable)).toEqual({ east: 15 });
    const query = await ok<Ran>(ann, 'REPORTS.EXECUTE', { guid: queryGuid, asOf: 'saved', pageSize: 10 });
    expect(query.records!.map((r) => r.amount)).toEqual([10, 7, 5]);
    const queryLatest = await ok<Ran>(ann, 'REPORTS.EXECUTE', { guid: queryGuid, pageSize: 10 });
    expect(queryLatest.records!.map((r) => r.amount)).toEqual([100, 2]);
  });
});
