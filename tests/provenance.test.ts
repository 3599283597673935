import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { rpcClient } from './support/http';
import { createIdentity, withStore, type Identity } from './support/identities';
import { runCli } from './support/quarry-process';
import { seededRandom } from './support/indexed-records';
import { startStackWithData, type Stack } from './support/stack';

/*
 * Answers that prove themselves, end to end through JSON-RPC: every search, crosstab and report run says
 * which data gave it (meta.provenance, the snapshot's SHA-256 checked against the file itself), hands a
 * signed token that QUERIES.REPLAY answers the same data for from the same version, with the caller's
 * rights of now, and a crosstab with verify: true is recomputed along an independent path.
 */

type Provenance = {
  index: string;
  version: number;
  snapshot: string | null;
  engine: string;
  servedBy: string | null;
  cached: boolean;
};
type Meta = {
  cache?: string;
  servedBy?: string;
  provenance?: Provenance;
  replay?: string;
  verify?: { cells: number; mismatched: number };
};
type Answer<T = Record<string, unknown>> = {
  result?: { data: T; meta: Meta };
  error?: { code: number; data?: { detail?: string } };
};

const REGIONS = ['north', 'south', 'east', 'west'];
const PRODUCTS = ['apples', 'pears', 'plums'];

/** Sales with known values: a region, a product, an amount and a day, 2,000 of them. */
function salesCsv(n: number, seed: number): string {
  const rnd = seededRandom(seed);
  const lines = ['region,product,amount,day'];
  for (let i = 0; i < n; i++) {
    const day = new Date(Date.UTC(2024, 0, 1) + Math.floor(rnd() * 365) * 86_400_000).toISOString().slice(0, 10);
    lines.push(
      `${REGIONS[Math.floor(rnd() * 4)]},${PRODUCTS[Math.floor(rnd() * 3)]},${(Math.floor(rnd() * 100_000) / 100).toFixed(2)},${day}`,
    );
  }
  return `${lines.join('\n')}\n`;
}

let stack: Stack;
let ann: Identity;
let bob: Identity;
let work: string;

const call = <T = Record<string, unknown>>(who: Identity, method: string, params: unknown) =>
  rpcClient(stack.quarry.baseUrl, who.token)
    .call(method, params)
    .then((r) => r.json as Answer<T>);

async function load(name: string, csv: string): Promise<void> {
  const file = path.join(work, `${name}-${Date.now()}.csv`);
  fs.writeFileSync(file, csv);
  const res = await runCli(['index', 'load', name, file], stack.env);
  if (res.code !== 0) throw new Error(res.stderr);
}

/** The SHA-256 of the file the catalog names for the index's current version, read here. */
async function currentSha(index: string): Promise<{ version: number; sha: string }> {
  const entry = await withStore(stack.dataDir, (s) => s.getIndex(index));
  if (!entry) throw new Error(`no index ${index}`);
  const sha = createHash('sha256')
    .update(fs.readFileSync(path.join(stack.dataDir, entry.snapshot)))
    .digest('hex');
  return { version: entry.version, sha };
}

const BY_REGION = {
  index: 'sales',
  rows: ['region'],
  columns: [{ field: 'product' }],
  totals: [{ aggregationType: 'Count' }, { aggregationType: 'Sum', field: 'amount' }],
  format: 'json',
};

beforeAll(async () => {
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-provenance-'));
  stack = await startStackWithData();
  await load('sales', salesCsv(2000, 7));
  ann = await createIdentity(stack.dataDir, 'ann');
  bob = await createIdentity(stack.dataDir, 'bob');
}, 600_000);

afterAll(async () => {
  await stack?.quarry.stop();
  fs.rmSync(work, { recursive: true, force: true });
});

describe('meta.provenance', () => {
  it('names the index version, the SHA-256 of its records file, the engine, and whether the cache answered', async () => {
    const { version, sha } = await currentSha('sales');
    const params = { index: 'sales', query: 'region:north', pageSize: 5 };
    const first = await call(ann, 'QUERIES.EXECUTE', params);
    expect(first.result?.meta.provenance).toEqual({
      index: 'sales',
      version,
      snapshot: sha,
      engine: 'duckdb',
      servedBy: null,
      cached: false,
    });
    const again = await call(ann, 'QUERIES.EXECUTE', params);
    expect(again.result?.meta.cache).toBe('hit');
    expect(again.result?.meta.provenance).toMatchObject({ version, snapshot: sha, cached: true });
  });

  it('follows the version a reload publishes, with its own file’s SHA-256', async () => {
    await load('moving', salesCsv(50, 1));
    const before = await call(ann, 'QUERIES.EXECUTE', { index: 'moving', pageSize: 1 });
    await load('moving', salesCsv(60, 2));
    const { version, sha } = await currentSha('moving');
    const after = await call(ann, 'QUERIES.EXECUTE', { index: 'moving', pageSize: 1 });
    expect(after.result?.meta.provenance).toMatchObject({ version, snapshot: sha });
    expect(after.result?.meta.provenance?.version).toBe(before.result!.meta.provenance!.version + 1);
    expect(after.result?.meta.provenance?.snapshot).not.toBe(before.result?.meta.provenance?.snapshot);
  });

  it('is on crosstabs and report runs too, naming the rollup that answered', async () => {
    const { version, sha } = await currentSha('sales');
    const scanned = await call(ann, 'CROSSTAB.EXECUTE', BY_REGION);
    expect(scanned.result?.meta.provenance).toEqual({
      index: 'sales',
      version,
      snapshot: sha,
      engine: 'duckdb',
      servedBy: null,
      cached: false,
    });
    const saved = await call<{ report: { guid: string } }>(ann, 'CROSSTAB.EXECUTE', {
      ...BY_REGION,
      saveReport: { name: 'by region' },
    });
    const ran = await call(ann, 'REPORTS.EXECUTE', { guid: saved.result!.data.report.guid });
    expect(ran.result?.meta.provenance).toMatchObject({ index: 'sales', version, snapshot: sha });
    expect(typeof ran.result?.meta.replay).toBe('string');
  });
});

describe('verify: true', () => {
  const cases: Array<[string, Record<string, unknown>]> = [
    ['a plain pivot with subtotals', { ...BY_REGION, rows: ['region', 'product'], columns: [], subtotals: true }],
    ['a rowLimit with an Other row (a folded pass)', { ...BY_REGION, rowLimit: 2, otherRow: true }],
    [
      'holistic totals with a column limit and an Other column',
      {
        ...BY_REGION,
        totals: [
          { aggregationType: 'Median', field: 'amount' },
          { aggregationType: 'CountDistinct', field: 'day' },
        ],
        columnLimit: 2,
        otherColumn: true,
      },
    ],
    [
      'a period comparison (twin passes)',
      {
        index: 'sales',
        rows: [{ field: 'day', dateGroup: 'month' }],
        totals: [{ aggregationType: 'Sum', field: 'amount', compare: { to: 'previousPeriod', as: 'difference' } }],
        format: 'json',
      },
    ],
    ['a rowFilter', { ...BY_REGION, rowFilter: { measure: 1, op: '>=', value: 1 } }],
  ];

  it.each(cases)('%s: every returned cell agrees with its independent recomputation', async (_name, params) => {
    const plain = await call<{ rowCount: number; data: unknown }>(ann, 'CROSSTAB.EXECUTE', params);
    expect(plain.error).toBeUndefined();
    expect(plain.result?.meta.verify).toBeUndefined();
    const checked = await call<{ rowCount: number; columnCount: number; data: unknown }>(ann, 'CROSSTAB.EXECUTE', {
      ...params,
      verify: true,
    });
    expect(checked.error).toBeUndefined();
    const { verify, cache } = checked.result!.meta;
    expect(verify?.mismatched).toBe(0);
    // Every drawn cell of every total at least (subtotals, totals and Other groups come on top).
    const totals = (params.totals as unknown[]).length;
    expect(verify!.cells).toBeGreaterThanOrEqual(checked.result!.data.rowCount * totals);
    // The answer itself was computed, not read from the cache, and is the same one.
    expect(cache).toBe('bypass');
    expect(checked.result!.data.data).toEqual(plain.result!.data.data);
  });

  it('checks an answer a rollup served against the records themselves', async () => {
    const added = await runCli(
      [
        'index',
        'rollup',
        'add',
        'sales',
        '--rows',
        'region',
        '--columns',
        'product',
        '--totals',
        'count,sum:amount',
        '--name',
        'rp',
      ],
      stack.env,
    );
    expect(added.stderr).toBe('');
    const checked = await call(ann, 'CROSSTAB.EXECUTE', { ...BY_REGION, verify: true });
    expect(checked.result?.meta.servedBy).toBe('rp');
    expect(checked.result?.meta.provenance?.servedBy).toBe('rp');
    expect(checked.result?.meta.verify).toEqual({ cells: expect.any(Number), mismatched: 0 });
    // 4 regions × 3 products, each row's total, each column's, the grand total: (4 + 1) × (3 + 1) groups.
    expect(checked.result?.meta.verify?.cells).toBe(5 * 4 * 2);
  });

  it('is refused with a clear error when it is not a boolean', async () => {
    const res = await call(ann, 'CROSSTAB.EXECUTE', { ...BY_REGION, verify: 'yes' });
    expect(res.error?.code).toBe(400);
    expect(res.error?.data?.detail).toMatch(/verify/);
  });
});

describe('QUERIES.REPLAY', () => {
  const replay = (who: Identity, token: string, extra: Record<string, unknown> = {}) =>
    call(who, 'QUERIES.REPLAY', { token, ...extra });

  it('answers the same records from the same version after the index was reloaded', async () => {
    await load('history', salesCsv(300, 11));
    const params = {
      index: 'history',
      query: 'region:east',
      pageSize: 7,
      sort: [{ field: 'amount', direction: 'desc' }],
    };
    const first = await call<{ total: number; records: unknown[] }>(ann, 'QUERIES.EXECUTE', params);
    const token = first.result!.meta.replay!;
    expect(token).toMatch(/^qr1\./);
    await load('history', salesCsv(500, 12));
    const now = await call<{ total: number; records: unknown[] }>(ann, 'QUERIES.EXECUTE', params);
    expect(now.result!.data.total).not.toBe(first.result!.data.total);
    const again = await replay(ann, token);
    expect(again.error).toBeUndefined();
    expect(again.result!.data).toEqual(first.result!.data);
    expect(again.result!.meta.provenance).toEqual({ ...first.result!.meta.provenance!, cached: expect.any(Boolean) });
    // A replay's own token replays the same call.
    expect(again.result!.meta.replay).toBe(token);
  });

  it('answers a crosstab, a chart and a report run again, cell for cell', async () => {
    const table = await call(ann, 'CROSSTAB.EXECUTE', { ...BY_REGION, format: 'csv' });
    const t = await replay(ann, table.result!.meta.replay!, { cache: false });
    expect(t.result?.meta.cache).toBe('bypass');
    expect(t.result?.data).toEqual(table.result?.data);
    const chart = await call(ann, 'CROSSTAB.EXECUTE', {
      index: 'sales',
      rows: ['region'],
      totals: [{ aggregationType: 'Sum', field: 'amount' }],
      chartType: 'Column2D',
      imageFormat: 'echarts',
    });
    expect(chart.error).toBeUndefined();
    expect((await replay(ann, chart.result!.meta.replay!)).result?.data).toEqual(chart.result?.data);
    const saved = await call<{ report: { guid: string } }>(ann, 'QUERIES.EXECUTE', {
      index: 'sales',
      query: 'product:plums',
      saveReport: { name: 'plums' },
    });
    const ran = await call<{ records: unknown[] }>(ann, 'REPORTS.EXECUTE', { guid: saved.result!.data.report.guid });
    const again = await replay(ann, ran.result!.meta.replay!);
    expect(again.result?.data.records).toEqual(ran.result?.data.records);
  });

  it('refuses a token changed in any way, cut short, or not a token at all', async () => {
    const first = await call(ann, 'QUERIES.EXECUTE', { index: 'sales', pageSize: 1 });
    const token = first.result!.meta.replay!;
    const [head, payload, sig] = token.split('.');
    const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1);
    const bad = [
      `${head}.${flip(payload, 5)}.${sig}`,
      `${head}.${payload}.${flip(sig, 3)}`,
      token.slice(0, -4),
      `qr2.${payload}.${sig}`,
      'qr1..',
      'hello',
      `${head}.${Buffer.from('{"m":"QUERIES.EXECUTE"}').toString('base64url')}.${sig}`,
    ];
    for (const t of bad) {
      const res = await replay(ann, t);
      expect({ t, code: res.error?.code }).toEqual({ t, code: 400 });
      expect(res.error?.data?.detail).toMatch(/not a replay token this deployment issued/);
    }
    const huge = await replay(ann, `qr1.${'A'.repeat(20_000)}.x`);
    expect(huge.error?.code).toBe(400);
    expect(huge.error?.data?.detail).toMatch(/token/);
  });

  it('works for its own user only, and needs the scopes the replayed method needs', async () => {
    const first = await call(ann, 'QUERIES.EXECUTE', { index: 'sales', pageSize: 1 });
    const token = first.result!.meta.replay!;
    const other = await replay(bob, token);
    expect(other.error?.code).toBe(403);
    expect(other.error?.data?.detail).toMatch(/another user/);
    // Another token of the same user replays it; one without query:execute may not.
    const annToo = await createIdentity(stack.dataDir, 'ann');
    expect((await replay(annToo, token)).error).toBeUndefined();
    const reader = await createIdentity(stack.dataDir, 'ann', { scopes: 'query:execute' });
    const saved = await call<{ report: { guid: string } }>(ann, 'QUERIES.EXECUTE', {
      index: 'sales',
      saveReport: { name: 'all sales' },
    });
    const ran = await call(ann, 'REPORTS.EXECUTE', { guid: saved.result!.data.report.guid });
    const noReports = await replay(reader, ran.result!.meta.replay!);
    expect(noReports.error?.code).toBe(403);
    expect(noReports.error?.data?.detail).toMatch(/reports:read/);
    expect((await replay(reader, token)).error).toBeUndefined();
  });

  it('runs with the caller’s realms and permissions of now, never those the token was made with', async () => {
    const carl = await createIdentity(stack.dataDir, 'carl');
    const first = await call<{ total: number }>(carl, 'QUERIES.EXECUTE', { index: 'sales', pageSize: 3 });
    const token = first.result!.meta.replay!;
    await withStore(stack.dataDir, (s) =>
      s.updateUser('carl', { realms: [{ index: 'sales', query: 'region:north' }] }),
    );
    const north = await call<{ total: number }>(ann, 'QUERIES.EXECUTE', { index: 'sales', query: 'region:north' });
    const narrowed = await replay(carl, token);
    expect(narrowed.result?.data.total).toBe(north.result!.data.total);
    expect(narrowed.result!.data.total).toBeLessThan(first.result!.data.total);
    await withStore(stack.dataDir, (s) => s.updateUser('carl', { indexes: ['movies'], realms: [] }));
    const gone = await replay(carl, token);
    expect(gone.error?.code).toBe(404);
  });

  it('is a 404 naming the version once that version is no longer kept', async () => {
    await load('pruned', salesCsv(40, 3));
    const first = await call(ann, 'QUERIES.EXECUTE', { index: 'pruned', pageSize: 1 });
    const { version } = first.result!.meta.provenance!;
    await load('pruned', salesCsv(41, 4));
    // The previous version is still kept: the replay answers.
    expect((await replay(ann, first.result!.meta.replay!)).error).toBeUndefined();
    await load('pruned', salesCsv(42, 5));
    const res = await replay(ann, first.result!.meta.replay!);
    expect(res.error?.code).toBe(404);
    expect(res.error?.data?.detail).toContain(`Version ${version} of index "pruned" is no longer kept`);
  });

  it('is refused to an embed token, and an embed token’s answers carry none', async () => {
    const embed = await call<{ token: string }>(ann, 'TOKENS.EMBED', { index: 'sales', ttlSeconds: 600 });
    const asEmbed = { user: 'ann', token: embed.result!.data.token, tokenId: '' };
    const searched = await call(asEmbed, 'QUERIES.EXECUTE', { index: 'sales', pageSize: 1 });
    expect(searched.result?.meta.provenance?.index).toBe('sales');
    expect(searched.result?.meta.replay).toBeUndefined();
    const first = await call(ann, 'QUERIES.EXECUTE', { index: 'sales', pageSize: 1 });
    const res = await replay(asEmbed, first.result!.meta.replay!);
    expect(res.error?.code).toBe(403);
  });
});
