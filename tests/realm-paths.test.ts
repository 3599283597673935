import fs from 'node:fs';
import path from 'node:path';
import { createIdentity, type Identity } from './support/identities';
import { rpcClient } from './support/http';
import { exportCalls } from './support/exports';
import { makeDataDir, runCli, startQuarry, type RunningQuarry } from './support/quarry-process';

/*
 * A user whose realm is one region, on the paths that read records apart from the plain pivot: the Other
 * row's pass, a period comparison's shifted pass, a rollup in place of the records, a report's parameters
 * and a crosstab export. Every number is plain JS over the records the realm lets through.
 */

const REGIONS = ['EU', 'US', 'APAC'];
const PRODUCTS = ['p1', 'p2', 'p3', 'p4', 'p5', 'p6'];

interface Sale {
  region: string;
  product: string;
  day: string;
  amount: number;
}

function sales(n: number): Sale[] {
  return Array.from({ length: n }, (_, i) => ({
    region: REGIONS[(i * 7) % 3],
    // Products far from even, so a rowLimit keeps different ones per region.
    product: PRODUCTS[(Math.floor(i / 3) * 5 + ((i * i) % 7)) % 6],
    day: `2024-${String(1 + ((i * 5) % 6)).padStart(2, '0')}-${String(1 + ((i * 11) % 28)).padStart(2, '0')}`,
    amount: ((i * 37) % 101) + 1,
  }));
}

interface JsonRow {
  key: Array<string | null>;
  total: Array<number | null>;
  other?: number;
}
interface JsonTable {
  rows: JsonRow[];
  grandTotal: Array<number | null>;
}
type Answer = {
  result?: { data: { data: JsonTable }; meta: { servedBy?: string } };
  error?: { code: number; data: { detail: string } };
};

describe('realms on the paths beside the plain pivot', () => {
  const dataDir = makeDataDir('quarry-review-realms-');
  const env = { QUARRY_DATA_DIR: dataDir };
  const records = sales(1200);
  const eu = records.filter((r) => r.region === 'EU');
  let quarry: RunningQuarry | undefined;
  let analyst: Identity;
  let europe: Identity;

  const call = async (who: Identity, method: string, params: unknown): Promise<Answer> =>
    (await rpcClient(quarry!.baseUrl, who.token).call(method, params)).json as Answer;
  const crosstab = (who: Identity, params: Record<string, unknown>) =>
    call(who, 'CROSSTAB.EXECUTE', { index: 'sales', format: 'json', cache: false, ...params });
  const sum = (rs: Sale[]) => rs.reduce((a, r) => a + r.amount, 0);

  beforeAll(async () => {
    const file = path.join(dataDir, 'sales.csv');
    fs.writeFileSync(
      file,
      ['region,product,day,amount', ...records.map((r) => `${r.region},${r.product},${r.day},${r.amount}`)].join('\n'),
    );
    expect((await runCli(['index', 'load', 'sales', file], env)).code).toBe(0);
    quarry = await startQuarry({ topology: 'all', dataDir });
    analyst = await createIdentity(dataDir, 'analyst', { indexes: '*' });
    europe = await createIdentity(dataDir, 'europe', {
      indexes: 'sales',
      realms: [{ index: 'sales', query: 'region:EU' }],
    });
    // A hang guard: the start alone may take up to a minute on a loaded machine.
  }, 180_000);
  afterAll(async () => {
    await quarry?.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('the Other row counts only the realm', async () => {
    const res = await crosstab(europe, {
      rows: ['product'],
      rowLimit: 2,
      otherRow: true,
      totals: [{ aggregationType: 'Count' }, { aggregationType: 'Sum', field: 'amount' }],
    });
    const table = res.result!.data.data;
    expect(table.grandTotal).toEqual([eu.length, sum(eu)]);
    const shown = table.rows.filter((r) => r.other === undefined).map((r) => r.key[0]);
    expect(shown).toHaveLength(2);
    const rest = eu.filter((r) => !shown.includes(r.product));
    const other = table.rows.find((r) => r.other !== undefined);
    expect(other?.total).toEqual([rest.length, sum(rest)]);
  });

  /** The median as DuckDB's quantile_cont(x, 0.5): the middle value, or the mean of the two middle ones. */
  const median = (rs: Sale[]): number | null => {
    const v = rs.map((r) => r.amount).sort((a, b) => a - b);
    if (v.length === 0) return null;
    const h = (v.length - 1) / 2;
    return (v[Math.floor(h)] + v[Math.ceil(h)]) / 2;
  };
  const month = (r: Sale) => Number(r.day.slice(5, 7));

  // With a median the Other row and the kept rows' totals come from one pass over every record.
  it('the Other row with a median and a distinct count counts only the realm, in every month', async () => {
    const res = await crosstab(europe, {
      rows: ['product'],
      rowLimit: 2,
      otherRow: true,
      columns: [{ field: 'day', dateGroup: 'month' }],
      totals: [
        { aggregationType: 'Count' },
        { aggregationType: 'Median', field: 'amount' },
        { aggregationType: 'CountDistinct', field: 'day' },
      ],
    });
    const table = res.result!.data.data as JsonTable & { columns: string[][]; columnTotals: number[][] };
    const values = (rs: Sale[]) => [rs.length, median(rs), new Set(rs.map((r) => r.day)).size];
    expect(table.grandTotal).toEqual(values(eu));
    const shown = table.rows.filter((r) => r.other === undefined).map((r) => r.key[0]);
    expect(shown).toHaveLength(2);
    for (const row of table.rows) {
      const mine = eu.filter((r) => (row.other === undefined ? r.product === row.key[0] : !shown.includes(r.product)));
      expect([row.key, row.total]).toEqual([row.key, values(mine)]);
      const cells = (row as JsonRow & { cells: number[][] }).cells;
      table.columns.slice(0, -1).forEach((c, j) => {
        const m = Number(String(c[0]).slice(5, 7));
        expect([row.key, m, cells[j]]).toEqual([row.key, m, values(mine.filter((r) => month(r) === m))]);
      });
    }
    table.columns.slice(0, -1).forEach((c, j) => {
      const m = Number(String(c[0]).slice(5, 7));
      expect([m, table.columnTotals[j]]).toEqual([m, values(eu.filter((r) => month(r) === m))]);
    });
  });

  it('a period comparison reads the previous month of the realm', async () => {
    const res = await crosstab(europe, {
      rows: [{ field: 'day', dateGroup: 'month' }],
      totals: [
        { aggregationType: 'Sum', field: 'amount' },
        { aggregationType: 'Sum', field: 'amount', compare: { to: 'previousPeriod', as: 'value' } },
      ],
    });
    const table = res.result!.data.data;
    const month = (m: number) => eu.filter((r) => Number(r.day.slice(5, 7)) === m);
    // Every month but the last (which may be cut to a partial span).
    for (const row of table.rows.slice(0, -1)) {
      const m = Number(String(row.key[0]).slice(5, 7));
      expect(row.total[0]).toBe(sum(month(m)));
      expect(row.total[1]).toBe(m === 1 ? null : sum(month(m - 1)));
    }
  });

  it('a rollup without the realm field never answers for the realm', async () => {
    const added = await runCli(
      [
        'index',
        'rollup',
        'add',
        'sales',
        '--rows',
        'product',
        '--columns',
        'day:month',
        '--totals',
        'count,sum:amount',
        '--name',
        'pm',
      ],
      env,
    );
    expect(added.stderr).toBe('');
    const params = {
      rows: ['product'],
      columns: [{ field: 'day', dateGroup: 'month' }],
      totals: [{ aggregationType: 'Count' }, { aggregationType: 'Sum', field: 'amount' }],
    };
    const all = await crosstab(analyst, params);
    expect(all.result?.meta.servedBy).toBe('pm');
    expect(all.result!.data.data.grandTotal).toEqual([records.length, sum(records)]);
    const mine = await crosstab(europe, params);
    expect(mine.result?.meta.servedBy).toBeUndefined();
    expect(mine.result!.data.data.grandTotal).toEqual([eu.length, sum(eu)]);
    for (const row of mine.result!.data.data.rows) {
      const rs = eu.filter((r) => r.product === row.key[0]);
      expect(row.total).toEqual([rs.length, sum(rs)]);
    }
  });

  it('a rollup holding the realm field answers for the realm with its records only', async () => {
    const added = await runCli(
      ['index', 'rollup', 'add', 'sales', '--rows', 'region,product', '--totals', 'count,sum:amount', '--name', 'rp'],
      env,
    );
    expect(added.stderr).toBe('');
    const mine = await crosstab(europe, {
      rows: ['product'],
      totals: [{ aggregationType: 'Count' }, { aggregationType: 'Sum', field: 'amount' }],
    });
    expect(mine.result?.meta.servedBy).toBe('rp');
    expect(mine.result!.data.data.grandTotal).toEqual([eu.length, sum(eu)]);
    for (const row of mine.result!.data.data.rows) {
      const rs = eu.filter((r) => r.product === row.key[0]);
      expect(row.total).toEqual([rs.length, sum(rs)]);
    }
  });

  it("a shared report's parameters filter within the realm", async () => {
    const saved = await call(analyst, 'CROSSTAB.EXECUTE', {
      index: 'sales',
      format: 'json',
      rows: ['region'],
      totals: [{ aggregationType: 'Count' }],
      saveReport: {
        name: 'by region',
        shared: true,
        parameters: [{ name: 'product', field: 'product', kind: 'values' }],
      },
    });
    const guid = (saved.result!.data as unknown as { report: { guid: string } }).report.guid;
    const ran = await call(europe, 'REPORTS.EXECUTE', { guid, format: 'json', parameters: { product: ['p1', 'p2'] } });
    const rs = eu.filter((r) => ['p1', 'p2'].includes(r.product));
    expect(ran.result!.data.data.grandTotal).toEqual([rs.length]);
    expect(ran.result!.data.data.rows.map((r) => r.key[0])).toEqual(['EU']);
  });

  it('a crosstab export with an Other row holds the realm only', async () => {
    const { start, finished, download } = exportCalls(() => quarry!.baseUrl);
    const id = await start(europe, {
      method: 'CROSSTAB.EXECUTE',
      params: {
        index: 'sales',
        rows: ['product'],
        rowLimit: 1,
        otherRow: true,
        totals: [{ aggregationType: 'Count' }],
      },
      format: 'jsonl',
    });
    expect((await finished(europe, id)).state).toBe('done');
    const lines = (await download(europe, id)).text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { key: unknown; total?: number[]; grandTotal?: number[] });
    expect(lines[lines.length - 1].grandTotal).toEqual([eu.length]);
    const rows = lines.slice(0, -1);
    expect(rows.reduce((a, r) => a + (r.total?.[0] ?? 0), 0)).toBe(eu.length);
  });
  // The Other row's comparison must come from the Other records of the earlier period, not from the
  // column total (which shares the Other pass's empty row key); with a median, from the realm's records
  // folded into the kept keys' pass.
  it.each([
    ['Sum', 'analyst', (rs: Sale[]) => sum(rs)],
    ['Median', 'europe', median],
  ] as const)(
    'a compared %s on the Other row reads the Other records of the previous month (%s)',
    async (aggregationType, who, value) => {
      const res = await crosstab(who === 'analyst' ? analyst : europe, {
        rows: ['product'],
        rowLimit: 2,
        otherRow: true,
        columns: [{ field: 'day', dateGroup: 'month' }],
        totals: [
          { aggregationType, field: 'amount' },
          { aggregationType, field: 'amount', compare: { to: 'previousPeriod', as: 'value' } },
        ],
      });
      const mine = who === 'analyst' ? records : eu;
      const table = res.result!.data.data as JsonTable & { columns: string[][] };
      const shown = table.rows.filter((r) => r.other === undefined).map((r) => r.key[0]);
      const other = table.rows.find((r) => r.other !== undefined) as JsonRow & { cells: Array<Array<number | null>> };
      const rest = (m: number) => mine.filter((r) => !shown.includes(r.product) && month(r) === m);
      table.columns.slice(1, -1).forEach((c, j) => {
        const m = Number(String(c[0]).slice(5, 7));
        expect([m, other.cells[j + 1]]).toEqual([m, [value(rest(m)), value(rest(m - 1))]]);
      });
    },
  );
  it('rollups answer with the appended records too', async () => {
    const more = sales(1500).slice(1200);
    const file = path.join(dataDir, 'more.csv');
    fs.writeFileSync(
      file,
      ['region,product,day,amount', ...more.map((r) => `${r.region},${r.product},${r.day},${r.amount}`)].join('\n'),
    );
    expect((await runCli(['index', 'load', 'sales', file, '--append'], env)).code).toBe(0);
    const all = [...records, ...more];
    const res = await crosstab(analyst, {
      rows: ['product'],
      columns: [{ field: 'day', dateGroup: 'month' }],
      totals: [{ aggregationType: 'Count' }, { aggregationType: 'Sum', field: 'amount' }],
    });
    expect(res.result?.meta.servedBy).toBeDefined();
    expect(res.result!.data.data.grandTotal).toEqual([all.length, sum(all)]);
    const mine = await crosstab(europe, { rows: ['product'], totals: [{ aggregationType: 'Count' }] });
    expect(mine.result?.meta.servedBy).toBe('rp');
    expect(mine.result!.data.data.grandTotal).toEqual([all.filter((r) => r.region === 'EU').length]);
  });
  it("the Other row's pass is never answered by a rollup without the outer row field", async () => {
    const added = await runCli(
      ['index', 'rollup', 'add', 'sales', '--rows', 'region', '--totals', 'count,sum:amount', '--name', 'r'],
      env,
    );
    expect(added.stderr).toBe('');
    const all = [...records, ...sales(1500).slice(1200)];
    const res = await crosstab(analyst, {
      rows: ['product'],
      rowLimit: 2,
      otherRow: true,
      totals: [{ aggregationType: 'Count' }, { aggregationType: 'Sum', field: 'amount' }],
    });
    expect(res.error).toBeUndefined();
    const table = res.result!.data.data;
    const shown = table.rows.filter((r) => r.other === undefined).map((r) => r.key[0]);
    const rest = all.filter((r) => !shown.includes(r.product));
    expect(table.rows.find((r) => r.other !== undefined)?.total).toEqual([rest.length, sum(rest)]);
  });
});
