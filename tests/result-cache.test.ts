import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { sqliteFile } from '@quarry/metadata-store';
import { createIdentity, type Identity } from './support/identities';
import { rawRequest, rpcClient } from './support/http';
import { runCli } from './support/quarry-process';
import { startStackWithData, type Stack } from './support/stack';

interface Answer {
  data?: Record<string, unknown>;
  /** The `data` member exactly as it was serialized, for byte comparisons. */
  dataJson: string;
  cache?: string;
  error?: { code: number; data: { detail: string } };
}

const CACHE_MB = 1;

async function ask(stack: Stack, who: Identity, method: string, params: Record<string, unknown>): Promise<Answer> {
  const res = await rpcClient(stack.quarry.baseUrl, who.token).call(method, params);
  const body = res.json as {
    result?: { data: Record<string, unknown>; meta: { requestId: string; cache?: string } };
    error?: Answer['error'];
  };
  return {
    data: body.result?.data,
    dataJson: JSON.stringify(body.result?.data),
    cache: body.result?.meta.cache,
    error: body.error,
  };
}

function writeCsv(stack: Stack, name: string, rows: Array<[string, number]>): string {
  const file = path.join(stack.dataDir, name);
  fs.writeFileSync(file, ['city,amount', ...rows.map(([c, a]) => `${c},${a}`)].join('\n'));
  return file;
}

async function loadCities(stack: Stack, rows: Array<[string, number]>, file: string): Promise<void> {
  const res = await stack.cli(['index', 'load', 'cities', writeCsv(stack, file, rows)]);
  if (res.code !== 0) throw new Error(`index load failed: ${res.stderr}`);
}

/** Changes a user's realms in the store, as an administrator's tool would (there is no CLI for it yet). */
function setRealms(stack: Stack, user: string, realms: Array<{ index: string; query: string }>): void {
  const db = new Database(sqliteFile(stack.dataDir));
  try {
    db.pragma('busy_timeout = 5000');
    expect(db.prepare('UPDATE users SET realms = ? WHERE name = ?').run(JSON.stringify(realms), user).changes).toBe(1);
  } finally {
    db.close();
  }
}

async function metric(stack: Stack, name: string): Promise<number> {
  const text = (await rawRequest(stack.quarry.opsUrl, { method: 'GET', path: '/metrics' })).text;
  const line = text.split('\n').find((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`));
  if (!line) throw new Error(`${name} is not in /metrics`);
  return Number(line.slice(line.lastIndexOf(' ') + 1));
}

const cities = (a: Answer) => ((a.data?.records ?? []) as Array<{ city: string }>).map((r) => r.city);
/** The fastest of several runs: a pause of a loaded machine only ever makes a run slower. */
const fastestOf = (xs: number[]) => Math.min(...xs);

describe('the result cache over JSON-RPC (QUARRY_CACHE_MB=1)', () => {
  let stack: Stack;
  let analyst: Identity;

  beforeAll(async () => {
    stack = await startStackWithData({
      env: { QUARRY_CACHE_MB: String(CACHE_MB) },
      extra: async (env) => {
        const first = path.join(env.QUARRY_DATA_DIR, 'cities-1.csv');
        fs.writeFileSync(first, 'city,amount\nOslo,1\nLima,2\nOslo,3\n');
        const res = await runCli(['index', 'load', 'cities', first], env);
        if (res.code !== 0) throw new Error(`index load failed: ${res.stderr}`);
      },
    });
    analyst = await createIdentity(stack.dataDir, 'analyst', { indexes: '*' });
  }, 120000);
  afterAll(async () => {
    await stack?.quarry.stop();
  });

  it('a hit carries exactly the bytes of the miss, for a query, a crosstab table and a chart', async () => {
    const query = {
      index: 'movies',
      query: 'Title:star',
      pageSize: 20,
      sort: [{ field: 'Worldwide Gross', direction: 'desc' }],
    };
    const miss = await ask(stack, analyst, 'QUERIES.EXECUTE', query);
    const hit = await ask(stack, analyst, 'QUERIES.EXECUTE', query);
    expect([miss.cache, hit.cache]).toEqual(['miss', 'hit']);
    expect(miss.data?.total).toBeGreaterThan(5);
    expect(hit.dataJson).toBe(miss.dataJson);

    const pivot = {
      index: 'movies',
      query: 'Title:the',
      rows: ['Major Genre'],
      columns: [{ field: 'MPAA Rating' }],
      totals: [{ aggregationType: 'Average', field: 'IMDB Rating' }],
    };
    const table = await ask(stack, analyst, 'CROSSTAB.EXECUTE', pivot);
    const tableHit = await ask(stack, analyst, 'CROSSTAB.EXECUTE', pivot);
    expect([table.cache, tableHit.cache]).toEqual(['miss', 'hit']);
    expect(table.data?.data).toContain('<table');
    expect(tableHit.dataJson).toBe(table.dataJson);

    // A chart is drawn each time; the crosstab under it is what the cache serves.
    const chart = {
      index: 'flights',
      query: 'delay:>0',
      rows: ['origin'],
      totals: [{ aggregationType: 'Average', field: 'delay' }],
      chartType: 'Column2D',
    };
    const drawn = await ask(stack, analyst, 'CROSSTAB.EXECUTE', chart);
    const drawnAgain = await ask(stack, analyst, 'CROSSTAB.EXECUTE', chart);
    expect(drawn.error).toBeUndefined();
    expect(drawn.data?.contentType).toBe('image/png');
    expect([drawn.cache, drawnAgain.cache]).toEqual(['miss', 'hit']);
  });

  it('cache: false says bypass and answers the same data; the entry stays for other calls', async () => {
    const query = { index: 'movies', query: 'Director:spielberg', pageSize: 7 };
    const miss = await ask(stack, analyst, 'QUERIES.EXECUTE', query);
    const bypass = await ask(stack, analyst, 'QUERIES.EXECUTE', { ...query, cache: false });
    expect([miss.cache, bypass.cache]).toEqual(['miss', 'bypass']);
    expect(bypass.dataJson).toBe(miss.dataJson);
    expect((await ask(stack, analyst, 'QUERIES.EXECUTE', query)).cache).toBe('hit');
    const pivot = { index: 'movies', rows: ['Major Genre'], totals: [{ aggregationType: 'Count' }] };
    expect((await ask(stack, analyst, 'CROSSTAB.EXECUTE', { ...pivot, cache: false })).cache).toBe('bypass');
    expect((await ask(stack, analyst, 'CROSSTAB.EXECUTE', pivot)).cache).toBe('miss');
    const notBoolean = await ask(stack, analyst, 'QUERIES.EXECUTE', { ...query, cache: 'false' });
    expect(notBoolean.error).toMatchObject({ code: 400, data: { detail: 'cache must be a boolean' } });
  });

  it('misses after a reload and after a drop and a new load of the same name, and serves the new rows', async () => {
    const query = { index: 'cities', query: '*' };
    const pivot = { index: 'cities', rows: ['city'], totals: [{ aggregationType: 'Sum', field: 'amount' }] };
    const before = await ask(stack, analyst, 'QUERIES.EXECUTE', query);
    expect(cities(before)).toEqual(['Oslo', 'Lima', 'Oslo']);
    expect((await ask(stack, analyst, 'QUERIES.EXECUTE', query)).cache).toBe('hit');
    await ask(stack, analyst, 'CROSSTAB.EXECUTE', pivot);
    expect((await ask(stack, analyst, 'CROSSTAB.EXECUTE', pivot)).cache).toBe('hit');

    await loadCities(
      stack,
      [
        ['Quito', 10],
        ['Lima', 20],
      ],
      'cities-2.csv',
    );
    const reloaded = await ask(stack, analyst, 'QUERIES.EXECUTE', query);
    expect(reloaded.cache).toBe('miss');
    expect(cities(reloaded)).toEqual(['Quito', 'Lima']);
    const table = await ask(stack, analyst, 'CROSSTAB.EXECUTE', pivot);
    expect(table.cache).toBe('miss');
    expect(table.data?.data).toContain('Quito');
    expect(table.data?.data).not.toContain('Oslo');

    expect((await stack.cli(['index', 'drop', 'cities'])).code).toBe(0);
    expect((await ask(stack, analyst, 'QUERIES.EXECUTE', query)).error).toMatchObject({ code: 404 });
    expect((await ask(stack, analyst, 'CROSSTAB.EXECUTE', pivot)).error).toMatchObject({ code: 404 });

    await loadCities(
      stack,
      [
        ['Oslo', 5],
        ['Lima', 6],
        ['Oslo', 7],
      ],
      'cities-3.csv',
    );
    const again = await ask(stack, analyst, 'QUERIES.EXECUTE', query);
    expect(again.cache).toBe('miss');
    expect(again.data?.records).toEqual([
      { city: 'Oslo', amount: 5 },
      { city: 'Lima', amount: 6 },
      { city: 'Oslo', amount: 7 },
    ]);
    const againTable = await ask(stack, analyst, 'CROSSTAB.EXECUTE', pivot);
    expect(againTable.cache).toBe('miss');
    expect(againTable.data?.data).toContain('>12<');
  });

  it('callers with other realms never share an entry, also when a realm changes in the store', async () => {
    await loadCities(
      stack,
      [
        ['Oslo', 5],
        ['Lima', 6],
        ['Oslo', 7],
      ],
      'cities-4.csv',
    );
    const north = await createIdentity(stack.dataDir, 'north', {
      indexes: 'cities',
      realms: [{ index: 'cities', query: 'city:Oslo' }],
    });
    const south = await createIdentity(stack.dataDir, 'south', {
      indexes: 'cities',
      realms: [{ index: 'cities', query: 'city:Lima' }],
    });
    const query = { index: 'cities', query: 'amount:>0' };
    const pivot = { index: 'cities', rows: ['city'], totals: [{ aggregationType: 'Sum', field: 'amount' }] };

    const n1 = await ask(stack, north, 'QUERIES.EXECUTE', query);
    const n2 = await ask(stack, north, 'QUERIES.EXECUTE', query);
    expect([n1.cache, n2.cache]).toEqual(['miss', 'hit']);
    expect(cities(n2)).toEqual(['Oslo', 'Oslo']);
    const s1 = await ask(stack, south, 'QUERIES.EXECUTE', query);
    expect(s1.cache).toBe('miss');
    expect(cities(s1)).toEqual(['Lima']);
    const open = await ask(stack, analyst, 'QUERIES.EXECUTE', query);
    expect(open.cache).toBe('miss');
    expect(cities(open)).toEqual(['Oslo', 'Lima', 'Oslo']);

    const northTable = await ask(stack, north, 'CROSSTAB.EXECUTE', pivot);
    const southTable = await ask(stack, south, 'CROSSTAB.EXECUTE', pivot);
    expect([northTable.cache, southTable.cache]).toEqual(['miss', 'miss']);
    expect(northTable.data?.data).not.toContain('Lima');
    expect(southTable.data?.data).not.toContain('Oslo');

    // North's realm moves south: its next calls are south's rows, never its own entries of before.
    setRealms(stack, 'north', [{ index: 'cities', query: 'city:Lima' }]);
    const moved = await ask(stack, north, 'QUERIES.EXECUTE', query);
    expect(cities(moved)).toEqual(['Lima']);
    // The same compiled search as south's: south's entry serves it, which is exactly right.
    expect(moved.cache).toBe('hit');
    expect(moved.dataJson).toBe(s1.dataJson);
    setRealms(stack, 'north', [{ index: 'cities', query: 'amount:>6' }]);
    const narrowed = await ask(stack, north, 'QUERIES.EXECUTE', query);
    expect(narrowed.cache).toBe('miss');
    expect(cities(narrowed)).toEqual(['Oslo']);
    const narrowedTable = await ask(stack, north, 'CROSSTAB.EXECUTE', pivot);
    expect(narrowedTable.cache).toBe('miss');
    expect(narrowedTable.data?.data).not.toContain('Lima');
  });

  it('a hit is faster than the miss it repeats', async () => {
    const missMs: number[] = [];
    const hitMs: number[] = [];
    for (let i = 0; i < 7; i++) {
      // Each round asks a crosstab no earlier call asked, then asks it again. Its table (~20 KB) is well
      // below the largest result a 1 MiB cache keeps (a quarter of it).
      const pivot = {
        index: 'flights',
        query: `distance:>${100 + i}`,
        rows: ['origin'],
        totals: [
          { aggregationType: 'Average', field: 'delay' },
          { aggregationType: 'Max', field: 'distance' },
        ],
      };
      let t = performance.now();
      const miss = await ask(stack, analyst, 'CROSSTAB.EXECUTE', pivot);
      missMs.push(performance.now() - t);
      t = performance.now();
      const hit = await ask(stack, analyst, 'CROSSTAB.EXECUTE', pivot);
      hitMs.push(performance.now() - t);
      expect([miss.cache, hit.cache]).toEqual(['miss', 'hit']);
      expect(hit.dataJson).toBe(miss.dataJson);
    }
    // Judged on the fastest of each (a miss costs its work every time, a pause does not come every time).
    // Quiet unless it fails: then the figures are the message.
    expect({
      hitFasterThanMiss: fastestOf(hitMs) < fastestOf(missMs),
      missMs: fastestOf(missMs),
      hitMs: fastestOf(hitMs),
    }).toEqual(expect.objectContaining({ hitFasterThanMiss: true }));
  });

  it(`stays within ${CACHE_MB} MiB over 10,000 distinct calls, and keeps answering correctly`, async () => {
    const client = rpcClient(stack.quarry.baseUrl, analyst.token);
    let next = 0;
    let bad = 0;
    let peakBytes = 0;
    const worker = async () => {
      while (next < 10_000) {
        const page = ++next;
        const body = (await client.call('QUERIES.EXECUTE', { index: 'flights', query: '*', page, pageSize: 2 }))
          .json as { result?: { data: { page: number; records: unknown[] } } };
        if (body.result?.data.page !== page || body.result.data.records.length !== 2) bad++;
        if (page % 1000 === 0) peakBytes = Math.max(peakBytes, await metric(stack, 'quarry_result_cache_bytes'));
      }
    };
    await Promise.all(Array.from({ length: 6 }, worker));
    expect(bad).toBe(0);
    const bytes = await metric(stack, 'quarry_result_cache_bytes');
    const entries = await metric(stack, 'quarry_result_cache_entries');
    expect(Math.max(bytes, peakBytes)).toBeLessThanOrEqual(CACHE_MB * 1024 * 1024);
    expect(bytes).toBeGreaterThan(CACHE_MB * 1024 * 1024 * 0.9);
    expect(entries).toBeGreaterThan(100);
    expect(entries).toBeLessThan(10_000);
    // The newest pages are still there; the first ones were evicted.
    expect(
      (await ask(stack, analyst, 'QUERIES.EXECUTE', { index: 'flights', query: '*', page: 10_000, pageSize: 2 })).cache,
    ).toBe('hit');
    const first = await ask(stack, analyst, 'QUERIES.EXECUTE', { index: 'flights', query: '*', page: 1, pageSize: 2 });
    expect(first.cache).toBe('miss');
    expect(first.data?.records).toHaveLength(2);
    expect(stack.quarry.alive()).toBe(true);
    // A hang guard, not a target: 10,000 calls take minutes on a loaded machine.
  }, 600_000);
});
