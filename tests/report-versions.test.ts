import fs from 'node:fs';
import path from 'node:path';
import { createIdentity, type Identity } from './support/identities';
import { makeDataDir, runCli, startQuarry, type RunningQuarry } from './support/quarry-process';
import { launchBrowser } from './support/browser';

/*
 * Saved reports over time, end to end over JSON-RPC on one all-in-one stack. A small index
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
    const png = await ok<Ran>(ann, 'REPORTS.EXECUTE', { guid: chart.report.guid, imageFormat: 'png' });
    expect(png.contentType).toBe('image/png');
    expect(Buffer.from(String(png.data), 'base64').subarray(1, 4).toString()).toBe('PNG');
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
    expect(await detail({ guid: crosstabGuid, format: 'tiff' })).toMatch(/^400: format must be one of/);
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

  // ---- REPORTS.METADATA versions, REPORTS.UPDATE, REPORTS.DELETE and the trash, the snapshot budget ----

  interface Meta {
    guid: string;
    name: string;
    shared: boolean;
    folder: string;
    version: number;
    versions: Array<{ version: number; savedAt: string; indexVersion: number }>;
    indexVersion: number;
    params: Record<string, unknown>;
  }
  const unknownGuid = '0b6f3d1e-2c4a-4b8e-9f7d-1a2b3c4d5e6f';
  /** An error with the guid blanked: two answers with the same shape print the same. */
  const shape = (res: Answer<unknown>, guid: string) => JSON.stringify(res.error).split(guid).join('<guid>');

  it('changes name, folder and sharing without a new version, and new params with one', async () => {
    const renamed = await ok<Meta>(ann, 'REPORTS.UPDATE', {
      guid: crosstabGuid,
      name: '  Sales per region ',
      folder: 'sales',
      description: 'by region',
    });
    expect(renamed).toMatchObject({ name: 'Sales per region', folder: 'sales', version: 1, shared: true });
    expect(renamed.versions.map((v) => v.version)).toEqual([1]);
    const found = await ok<{ reports: Array<{ guid: string; name: string }> }>(ann, 'REPORTS.FIND', {
      search: 'region',
    });
    expect(found.reports.find((r) => r.guid === crosstabGuid)?.name).toBe('Sales per region');

    // New params: checked and run as at save time, on the index as it is now (version 2).
    const counted = await ok<Meta>(ann, 'REPORTS.UPDATE', {
      guid: crosstabGuid,
      params: { rows: ['region'], totals: [{ aggregationType: 'Count' }], format: 'json' },
    });
    expect(counted.version).toBe(2);
    expect(counted.indexVersion).toBe(2);
    expect(counted.versions.map((v) => [v.version, v.indexVersion])).toEqual([
      [1, 1],
      [2, 2],
    ]);
    expect(counted.params).toMatchObject({ index: 'sales', rows: ['region'], totals: [{ aggregationType: 'Count' }] });

    const v1 = await ok<Meta>(ann, 'REPORTS.METADATA', { guid: crosstabGuid, version: 1 });
    expect(v1).toMatchObject({ version: 1, indexVersion: 1, params: { totals: [{ aggregationType: 'Sum' }] } });
    const latest = await ok<Meta>(ann, 'REPORTS.METADATA', { guid: crosstabGuid });
    expect(latest.version).toBe(2);
    // bob sees the shared report's versions too (he may read sales).
    expect((await ok<Meta>(bob, 'REPORTS.METADATA', { guid: crosstabGuid, version: 1 })).version).toBe(1);

    // Each version runs its own params: Count now, Sum for version 1.
    const runLatest = await ok<Ran>(ann, 'REPORTS.EXECUTE', { guid: crosstabGuid });
    expect(runLatest.report.version).toBe(2);
    expect(totalsByRegion(runLatest.data as JsonTable)).toEqual({ east: 1, west: 2 });
    const runV1 = await ok<Ran>(ann, 'REPORTS.EXECUTE', { guid: crosstabGuid, version: 1 });
    expect(runV1.report.version).toBe(1);
    expect(totalsByRegion(runV1.data as JsonTable)).toEqual({ east: 100, west: 3 });
    const runV1Saved = await ok<Ran>(ann, 'REPORTS.EXECUTE', { guid: crosstabGuid, version: 1, asOf: 'saved' });
    expect(totalsByRegion(runV1Saved.data as JsonTable)).toEqual({ east: 15, west: 7, north: 1 });
    const runV2Saved = await ok<Ran>(ann, 'REPORTS.EXECUTE', { guid: crosstabGuid, asOf: 'saved' });
    expect(runV2Saved.indexVersion).toBe(2);
    expect(totalsByRegion(runV2Saved.data as JsonTable)).toEqual({ east: 1, west: 2 });
  });

  it('shares and unshares a report: who may run it follows at once', async () => {
    const unshared = await ok<Meta>(ann, 'REPORTS.UPDATE', { guid: crosstabGuid, shared: false });
    expect(unshared).toMatchObject({ shared: false, version: 2 });
    const refused = await call(bob, 'REPORTS.EXECUTE', { guid: crosstabGuid });
    expect(shape(refused, crosstabGuid)).toBe(
      shape(await call(bob, 'REPORTS.EXECUTE', { guid: unknownGuid }), unknownGuid),
    );
    expect((await ok<Meta>(ann, 'REPORTS.UPDATE', { guid: crosstabGuid, shared: true })).shared).toBe(true);
    expect((await ok<Ran>(bob, 'REPORTS.EXECUTE', { guid: crosstabGuid })).report.version).toBe(2);
  });

  it('keeps every version when updates of one report race through JSON-RPC', async () => {
    const before = (await ok<Meta>(ann, 'REPORTS.METADATA', { guid: queryGuid })).version;
    const sizes = [11, 12, 13, 14, 15, 16];
    const answers = await Promise.all(
      sizes.map((pageSize) => ok<Meta>(ann, 'REPORTS.UPDATE', { guid: queryGuid, params: { pageSize } })),
    );
    expect(answers.map((a) => a.version).sort((x, y) => x - y)).toEqual(sizes.map((_, i) => before + i + 1));
    const after = await ok<Meta>(ann, 'REPORTS.METADATA', { guid: queryGuid });
    expect(after.versions.map((v) => v.version)).toEqual(
      Array.from({ length: before + sizes.length }, (_, i) => i + 1),
    );
    const kept = await Promise.all(
      after.versions
        .slice(before)
        .map((v) => ok<Meta>(ann, 'REPORTS.METADATA', { guid: queryGuid, version: v.version })),
    );
    expect(kept.map((m) => m.params.pageSize).sort()).toEqual(sizes);
  });

  it('refuses bad updates, naming the parameter, and keeps the report as it was', async () => {
    const detail = async (who: Identity, params: Record<string, unknown>) => {
      const res = await call(who, 'REPORTS.UPDATE', params);
      return `${res.error?.code}: ${res.error?.data.detail}`;
    };
    const g = crosstabGuid;
    expect(await detail(ann, { guid: g })).toBe(
      '400: give at least one of name, description, folder, shared, params or parameters to change',
    );
    expect(await detail(ann, { guid: g, name: 'x'.repeat(201) })).toBe('400: name must be at most 200 characters');
    expect(await detail(ann, { guid: g, name: '   ' })).toBe('400: name is required');
    expect(await detail(ann, { guid: g, shared: 'yes' })).toBe('400: shared must be a boolean');
    expect(await detail(ann, { guid: g, params: [1] })).toBe('400: params must be an object');
    expect(await detail(ann, { guid: g, params: { rows: [], totals: [{ aggregationType: 'Count' }] } })).toBe(
      '400: params.rows must name at least one field',
    );
    expect(await detail(ann, { guid: g, params: { rows: ['region'], totals: [], bogus: 1 } })).toMatch(
      /^400: params\.totals must have at least one item; Unknown parameter in params: "bogus"|^400: Unknown parameter/,
    );
    expect(await detail(ann, { guid: g, params: { rows: ['nope'], totals: [{ aggregationType: 'Count' }] } })).toMatch(
      /^400: .*nope/,
    );
    expect(
      await detail(ann, {
        guid: g,
        params: { rows: ['region'], totals: [{ aggregationType: 'Count' }], query: 'amount:[1 TO' },
      }),
    ).toMatch(/^400: /);
    expect(
      await detail(ann, {
        guid: g,
        params: { rows: ['region'], totals: [{ aggregationType: 'Count' }], saveReport: { name: 'x' } },
      }),
    ).toBe('400: params.saveReport is not an executable parameter: a report never keeps it');
    expect(
      await detail(ann, { guid: g, params: { index: 'other', rows: ['x'], totals: [{ aggregationType: 'Count' }] } }),
    ).toBe('400: params.index: a report keeps its index ("sales"); save a new report for another one');
    expect(await detail(ann, { guid: g, name: 'big sales' })).toBe('409: You already have a report named "big sales"');
    const after = await ok<Meta>(ann, 'REPORTS.METADATA', { guid: g });
    expect(after).toMatchObject({ name: 'Sales per region', version: 2 });
    // reports:read alone may not change a report.
    expect(await detail(noQuery, { guid: g, name: 'n' })).toBe('403: Token lacks the required scope "reports:write"');
  });

  it('answers an update or delete of another user’s report exactly as one of an unknown guid', async () => {
    for (const method of ['REPORTS.UPDATE', 'REPORTS.DELETE']) {
      const params = (guid: string) => (method === 'REPORTS.UPDATE' ? { guid, name: 'mine now' } : { guid });
      const forUnknown = shape(await call(bob, method, params(unknownGuid)), unknownGuid);
      expect(JSON.parse(forUnknown)).toEqual({
        code: 404,
        message: 'Not Found',
        data: { type: 'about:blank', detail: 'Report <guid> not found' },
      });
      // ann's shared report (which bob may run) and her private one: the same answer.
      expect(shape(await call(bob, method, params(crosstabGuid)), crosstabGuid)).toBe(forUnknown);
      expect(shape(await call(bob, method, params(privateGuid)), privateGuid)).toBe(forUnknown);
    }
    // Also with new params: nothing is run for a report that is not the caller's.
    const withParams = await call(bob, 'REPORTS.UPDATE', {
      guid: crosstabGuid,
      params: { rows: ['region'], totals: [{ aggregationType: 'Count' }] },
    });
    expect(shape(withParams, crosstabGuid)).toBe(
      shape(await call(bob, 'REPORTS.UPDATE', { guid: unknownGuid, name: 'x' }), unknownGuid),
    );
    expect((await ok<Meta>(ann, 'REPORTS.METADATA', { guid: crosstabGuid })).name).toBe('Sales per region');
    // An admin may change anyone's report.
    const root = await createIdentity(quarry.dataDir, 'root', { admin: true });
    expect((await ok<Meta>(root, 'REPORTS.UPDATE', { guid: privateGuid, folder: 'audited' })).folder).toBe('audited');
  });

  it('moves a deleted report into the trash: gone everywhere, back with quarry report restore', async () => {
    const before = Date.now();
    const deleted = await ok<{ guid: string; restorableUntil: string }>(ann, 'REPORTS.DELETE', { guid: privateGuid });
    expect(deleted.guid).toBe(privateGuid);
    const until = Date.parse(deleted.restorableUntil) - before;
    expect(until).toBeGreaterThan(30 * 86400000 - 60000);
    expect(until).toBeLessThan(30 * 86400000 + 60000);

    const forUnknown = shape(await call(ann, 'REPORTS.METADATA', { guid: unknownGuid }), unknownGuid);
    for (const [method, extra] of [
      ['REPORTS.METADATA', {}],
      ['REPORTS.EXECUTE', {}],
      ['REPORTS.UPDATE', { name: 'back' }],
      ['REPORTS.DELETE', {}],
    ] as const)
      expect({ method, error: shape(await call(ann, method, { guid: privateGuid, ...extra }), privateGuid) }).toEqual({
        method,
        error: forUnknown,
      });
    const listed = await ok<{ reports: Array<{ guid: string }> }>(ann, 'REPORTS.FIND', { limit: 200 });
    expect(listed.reports.map((r) => r.guid)).not.toContain(privateGuid);
    // Its name is free again while it is in the trash.
    const again = await ok<{ report: { guid: string } }>(ann, 'QUERIES.EXECUTE', {
      index: 'sales',
      saveReport: { name: 'Private sales (new)' },
    });
    expect(again.report.guid).not.toBe(privateGuid);

    // Restoring for another user answers as for an unknown guid; for its owner, or any, it comes back.
    const cli = (args: string[], extra: Record<string, string> = {}) => runCli(args, { ...env, ...extra });
    const trash = await cli(['report', 'list', '--trash', '--user', 'ann']);
    expect(trash.stdout).toMatch(
      new RegExp(`^guid\ttype\towner\tdeleted\tname\n${privateGuid}\tquery\tann\tdeleted \\S+\tPrivate sales\n$`),
    );
    expect((await cli(['report', 'list', '--trash', '--user', 'bob'])).stdout).toBe('the trash is empty\n');
    const asBob = await cli(['report', 'restore', privateGuid, '--user', 'bob']);
    const asUnknown = await cli(['report', 'restore', unknownGuid, '--user', 'bob']);
    expect(asBob.code).not.toBe(0);
    expect(asBob.stderr.split(privateGuid).join('<guid>')).toBe(asUnknown.stderr.split(unknownGuid).join('<guid>'));
    expect(asBob.stderr).toContain('is not in the trash');
    const restored = await cli(['report', 'restore', privateGuid, '--user', 'ann']);
    expect(restored.stderr).toBe('');
    expect(restored.stdout).toContain(`restored report ${privateGuid}`);
    const back = await ok<Meta>(ann, 'REPORTS.METADATA', { guid: privateGuid });
    expect(back).toMatchObject({ name: 'Private sales', folder: 'audited', version: 1 });

    // Past QUARRY_REPORT_TRASH_DAYS it is purged: no restore brings it back.
    await ok(ann, 'REPORTS.DELETE', { guid: privateGuid });
    const late = await cli(['report', 'restore', privateGuid], { QUARRY_REPORT_TRASH_DAYS: '0' });
    expect(late.code).not.toBe(0);
    expect(late.stderr).toContain(`Report ${privateGuid} is not in the trash`);
    expect((await cli(['report', 'restore', privateGuid])).stderr).toContain('is not in the trash');
  });

  it('keeps the snapshots saved reports run on within QUARRY_SNAPSHOT_KEEP_MB, newest first, and names one no longer kept', async () => {
    // Version 3: version 1 is no longer the previous one but reports were saved on it: kept.
    await load('sales', ['region,product,amount', 'east,a,1000'].join('\n'));
    const v1 = await ok<Ran>(ann, 'REPORTS.EXECUTE', { guid: crosstabGuid, version: 1, asOf: 'saved' });
    expect(totalsByRegion(v1.data as JsonTable)).toEqual({ east: 15, west: 7, north: 1 });
    const latest = await ok<Ran>(ann, 'REPORTS.EXECUTE', { guid: crosstabGuid, version: 1 });
    expect(latest.indexVersion).toBe(3);
    expect(totalsByRegion(latest.data as JsonTable)).toEqual({ east: 1000 });

    // Version 4 under a budget that holds one earlier snapshot: version 2 (newer) stays, version 1 goes.
    const files = fs.readdirSync(path.join(quarry.dataDir, 'indexes', 'sales'));
    const largest = Math.max(...files.map((f) => fs.statSync(path.join(quarry.dataDir, 'indexes', 'sales', f)).size));
    const budgetMb = (largest * 1.5) / 1048576;
    const file = path.join(dir, 'v4.csv');
    fs.writeFileSync(file, ['region,product,amount', 'west,a,5'].join('\n'));
    const res = await runCli(['index', 'load', 'sales', file], { ...env, QUARRY_SNAPSHOT_KEEP_MB: String(budgetMb) });
    expect(res.code).toBe(0);

    const gone = await call(ann, 'REPORTS.EXECUTE', { guid: crosstabGuid, version: 1, asOf: 'saved' });
    expect(gone.error).toEqual({
      code: 404,
      message: 'Not Found',
      data: { type: 'about:blank', detail: 'Version 1 of index "sales" is no longer kept (the current version is 4)' },
    });
    const queryGone = await call(ann, 'REPORTS.EXECUTE', { guid: queryGuid, version: 1, asOf: 'saved' });
    expect(queryGone.error?.data.detail).toBe(
      'Version 1 of index "sales" is no longer kept (the current version is 4)',
    );
    const v2 = await ok<Ran>(ann, 'REPORTS.EXECUTE', { guid: crosstabGuid, asOf: 'saved' });
    expect(v2.indexVersion).toBe(2);
    expect(totalsByRegion(v2.data as JsonTable)).toEqual({ east: 1, west: 2 });
    // Runs on the latest load are untouched.
    const now = await ok<Ran>(ann, 'REPORTS.EXECUTE', { guid: crosstabGuid, version: 1 });
    expect(totalsByRegion(now.data as JsonTable)).toEqual({ west: 5 });
    // On disk: the current (4), the previous (3) and version 2's snapshot.
    expect(fs.readdirSync(path.join(quarry.dataDir, 'indexes', 'sales'))).toHaveLength(3);
  });

  it('lists a report’s versions in the console and runs one as saved and as the index is now', async () => {
    await load('sales', ['region,product,amount', 'west,a,5'].join('\n'));
    const saved = await ok<{ report: { guid: string } }>(ann, 'CROSSTAB.EXECUTE', {
      index: 'sales',
      rows: ['region'],
      totals: [{ aggregationType: 'Sum', field: 'amount', name: 'Amount' }],
      saveReport: { name: 'Sales table' },
    });
    const savedOn = (await ok<Meta>(ann, 'REPORTS.METADATA', { guid: saved.report.guid })).indexVersion;
    await load('sales', ['region,product,amount', 'north,z,42'].join('\n'));
    const browser = await launchBrowser();
    try {
      const page = await browser.newPage();
      await page.setViewport({ width: 1280, height: 800 });
      const problems: string[] = [];
      page.on('pageerror', (err) => problems.push(String(err)));
      await page.goto(`${quarry.baseUrl}/console`, { waitUntil: 'networkidle0' });
      await page.type('#token', ann.token);
      await page.click('#token-form button[type=submit]');
      await page.waitForFunction(() => document.querySelectorAll('#index-list .card').length > 0);
      await page.click('#tab-reports');
      await page.waitForFunction(() =>
        Array.from(document.querySelectorAll('#reports-table td')).some((td) => td.textContent === 'Sales table'),
      );
      const row = await page.$$eval('#reports-table tbody tr', (trs) =>
        trs.findIndex((tr) => tr.querySelector('td')?.textContent === 'Sales table'),
      );
      await page.click(`#reports-table tbody tr:nth-child(${row + 1}) button.quiet`);
      await page.waitForSelector('#versions-table tbody tr');
      expect(await page.$eval('#report-versions h3', (h) => h.textContent)).toBe('Versions of "Sales table"');
      expect(await page.$$eval('#versions-table tbody td', (tds) => tds.map((td) => td.textContent))).toEqual([
        '1 latest',
        expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\d$/),
        String(savedOn),
        'RunRun as saved',
      ]);

      const runAndRead = async (button: string) => {
        await page.click(`#versions-table tbody tr:first-child button${button}`);
        await page.waitForFunction(
          (want) => document.querySelector('#report-run-caption')?.textContent?.includes(want),
          {},
          button === '.quiet' ? '(as saved)' : '(latest)',
        );
        return {
          caption: await page.$eval('#report-run-caption', (p) => p.textContent),
          cells: await page.$$eval('#report-run tbody tr', (trs) =>
            trs.map((tr) => Array.from(tr.children).map((c) => c.textContent?.trim())),
          ),
        };
      };
      const asSaved = await runAndRead('.quiet');
      expect(asSaved.caption).toBe(`Version 1, run on load ${savedOn} of the index (as saved)`);
      expect(asSaved.cells).toEqual([['west', '5']]);
      fs.mkdirSync(path.join(__dirname, '..', 'test-output', 'console'), { recursive: true });
      await page.screenshot({
        path: path.join(__dirname, '..', 'test-output', 'console', 'report-versions-1280.png'),
        fullPage: true,
      });
      await page.setViewport({ width: 390, height: 800 });
      await page.screenshot({
        path: path.join(__dirname, '..', 'test-output', 'console', 'report-versions-390.png'),
        fullPage: true,
      });
      // Nothing wider than the phone's screen but inside the scrolling table boxes.
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      expect(overflow).toBeLessThanOrEqual(0);
      await page.setViewport({ width: 1280, height: 800 });
      const latest = await runAndRead(':not(.quiet)');
      expect(latest.caption).toBe(`Version 1, run on load ${savedOn + 1} of the index (latest)`);
      expect(latest.cells).toEqual([['north', '42']]);
      expect(problems).toEqual([]);
      expect(saved.report.guid).toMatch(/^[0-9a-f-]{36}$/);
    } finally {
      await browser.close();
    }
    // A hang guard: a load, Chromium's start and the console's pages, on a loaded machine.
  }, 180_000);
});
