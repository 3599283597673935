import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { eventually } from './support/eventually';
import { createIdentity, type Identity } from './support/identities';
import { movies } from './support/datasets';
import { startStackWithData, type Stack } from './support/stack';

/*
 * Alerts on scheduled deliveries end to end (docs/api.md REPORTS.SCHEDULE `when`): the real server, a real
 * webhook receiver, schedules that fire every second. What an alert matched is checked against counts
 * computed in JS over movies.json, and each matching row's drill query is run to count its records.
 */

interface Received {
  path: string;
  body: string;
}
interface AlertBody {
  total: string;
  op: string;
  value: number;
  on: string;
  rows: Array<{ key: Array<string | null>; value: number; drillQuery: string | null }>;
  rowsOmitted: number;
  grandTotal: number | null;
}
interface Delivery {
  outcome: string;
  detail: string;
}

/** Records each POST by path and answers 200. */
class Receiver {
  readonly got: Received[] = [];
  private readonly server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      this.got.push({ path: req.url ?? '', body });
      res.writeHead(200).end();
    });
  });
  async start(): Promise<number> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return (this.server.address() as AddressInfo).port;
  }
  at(path: string): Array<{ alert?: AlertBody; contentType: string; data: unknown }> {
    return this.got.filter((g) => g.path === path).map((g) => JSON.parse(g.body) as never);
  }
  stop(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

const records = movies();
/** Records per MPAA Rating (null for none), as the crosstab's rows group them. */
function countsBy(pred: (m: Record<string, unknown>) => boolean): Map<string | null, number> {
  const out = new Map<string | null, number>();
  for (const m of records.filter(pred)) {
    const k = typeof m['MPAA Rating'] === 'string' && m['MPAA Rating'] !== '' ? m['MPAA Rating'] : null;
    out.set(k, (out.get(k) ?? 0) + 1);
  }
  return out;
}

describe('alerts on schedules (REPORTS.SCHEDULE when)', () => {
  let stack: Stack;
  let ann: Identity;
  const receiver = new Receiver();
  let port: number;
  let crosstabGuid: string;
  let searchGuid: string;
  const crosstab = {
    index: 'movies',
    rows: ['MPAA Rating'],
    totals: [{ aggregationType: 'Count' }, { aggregationType: 'Sum', field: 'Worldwide Gross' }],
  };

  beforeAll(async () => {
    port = await receiver.start();
    stack = await startStackWithData({
      env: {
        QUARRY_SCHEDULE_MIN_INTERVAL_S: '1',
        QUARRY_WEBHOOK_ALLOW: `127.0.0.1:${port}`,
        QUARRY_DELIVERY_BACKOFF_MS: '200',
      },
    });
    ann = await createIdentity(stack.dataDir, 'ann', { indexes: '*' });
    const saved = await stack.call<{ report: { guid: string } }>(ann, 'CROSSTAB.EXECUTE', {
      ...crosstab,
      saveReport: { name: 'Films by rating' },
    });
    crosstabGuid = saved.data!.report.guid;
    const search = await stack.call<{ report: { guid: string } }>(ann, 'QUERIES.EXECUTE', {
      index: 'movies',
      saveReport: { name: 'All films' },
    });
    searchGuid = search.data!.report.guid;
  }, 180_000);

  afterAll(async () => {
    await stack?.quarry.stop();
    await receiver.stop();
  });

  const call = <T>(method: string, params: unknown) => stack.call<T>(ann, method, params);
  const schedule = async (path: string, when: unknown, extra: Record<string, unknown> = {}) => {
    const res = await call<{ scheduleId: string }>('REPORTS.SCHEDULE', {
      guid: crosstabGuid,
      // Every second (QUARRY_SCHEDULE_MIN_INTERVAL_S is 1 here); each test unschedules when it has seen enough.
      cron: '* * * * * *',
      format: 'csv',
      deliver: { webhook: { url: `http://127.0.0.1:${port}${path}` } },
      when,
      ...extra,
    });
    if (res.error) throw new Error(res.error.data.detail);
    return res.data!.scheduleId;
  };
  const deliveries = async (scheduleId: string) => {
    const listed = await call<{ schedules: Array<{ scheduleId: string; deliveries: Delivery[]; when: unknown }> }>(
      'REPORTS.SCHEDULES',
      {},
    );
    const found = listed.data?.schedules.find((s) => s.scheduleId === scheduleId);
    if (!found) throw new Error(`${scheduleId} is not listed: ${JSON.stringify(listed)}`);
    return found;
  };
  const unschedule = (scheduleId: string) => call('REPORTS.UNSCHEDULE', { scheduleId });

  it('delivers when some row passes: the rows that match, their values and drill queries', async () => {
    const id = await schedule('/rows', { total: 'count (records)', op: '>', value: 100, on: 'anyRow' });
    const [got] = await eventually('the delivery', async () =>
      receiver.at('/rows').length ? receiver.at('/rows') : undefined,
    );
    const expected = [...countsBy(() => true)].filter(([, n]) => n > 100);
    expect(expected.length).toBeGreaterThan(0);
    expect(got.contentType).toMatch(/^text\/csv/);
    expect(got.alert).toMatchObject({ total: 'Count (Records)', op: '>', value: 100, on: 'anyRow', rowsOmitted: 0 });
    expect(new Map(got.alert!.rows.map((r) => [r.key[0], r.value]))).toEqual(new Map(expected));
    for (const row of got.alert!.rows) {
      const found = await call<{ total: number }>('QUERIES.EXECUTE', {
        index: 'movies',
        query: row.drillQuery,
        pageSize: 1,
      });
      expect(found.data!.total).toBe(row.value);
    }
    const listed = await deliveries(id);
    expect(listed.when).toEqual({ total: 'count (records)', op: '>', value: 100, on: 'anyRow', onlyOnChange: false });
    expect(listed.deliveries[0].outcome).toBe('delivered');
    await unschedule(id);
  });

  it('sends nothing when no row passes, and lists the run as skipped', async () => {
    const most = Math.max(...countsBy(() => true).values());
    const id = await schedule('/none', { total: 0, op: '>', value: most, on: 'anyRow' });
    const skipped = await eventually('the skipped run', async () => {
      const d = (await deliveries(id)).deliveries[0];
      return d?.outcome === 'skipped' ? d : undefined;
    });
    expect(skipped.detail).toBe(`not sent: the alert's condition (Count (Records) > ${most} on any row) did not hold`);
    expect(receiver.at('/none')).toEqual([]);
    await unschedule(id);
  });

  it('tests the grand total: its value, summed in JS', async () => {
    const gross = records.reduce(
      (s, m) => s + (typeof m['Worldwide Gross'] === 'number' ? m['Worldwide Gross'] : 0),
      0,
    );
    const id = await schedule('/grand', { total: 1, op: '>=', value: gross, on: 'grandTotal' });
    const [got] = await eventually('the delivery', async () =>
      receiver.at('/grand').length ? receiver.at('/grand') : undefined,
    );
    expect(got.alert!.on).toBe('grandTotal');
    expect(got.alert!.grandTotal).toBe(gross);
    expect(got.alert!.rows).toEqual([]);
    await unschedule(id);
    // Just above it: nothing.
    const above = await schedule(
      '/grand-above',
      { total: 1, op: '>', value: gross, on: 'grandTotal' },
      { runNow: false, cron: '* * * * * *' },
    );
    await eventually('a skipped run', async () =>
      (await deliveries(above)).deliveries[0]?.outcome === 'skipped' ? true : undefined,
    );
    expect(receiver.at('/grand-above')).toEqual([]);
    await unschedule(above);
  });

  it('onlyOnChange: delivers, skips the same matches, delivers again once they change', async () => {
    const own = await call<{ report: { guid: string } }>('CROSSTAB.EXECUTE', {
      ...crosstab,
      query: '(Major Genre):=Drama',
      saveReport: { name: 'Dramas by rating, alert' },
    });
    const guid = own.data!.report.guid;
    const id = await schedule(
      '/change',
      { total: 0, op: '>', value: 30, on: 'anyRow', onlyOnChange: true },
      {
        guid,
        cron: '* * * * * *',
        runNow: false,
      },
    );
    const outcomes = async () => (await deliveries(id)).deliveries.map((d) => d.outcome).reverse();
    // First run delivered, then at least one run with the same matches skipped.
    await eventually('delivered then skipped', async () => {
      const o = await outcomes();
      return o[0] === 'delivered' && o.includes('skipped') ? o : undefined;
    });
    expect(receiver.at('/change')).toHaveLength(1);
    const first = receiver.at('/change')[0].alert!;
    expect(new Map(first.rows.map((r) => [r.key[0], r.value]))).toEqual(
      new Map([...countsBy((m) => m['Major Genre'] === 'Drama')].filter(([, n]) => n > 30)),
    );
    // Another genre: other counts, so the next run delivers again.
    await call('REPORTS.UPDATE', { guid, params: { ...crosstab, query: '(Major Genre):=Comedy' } });
    await eventually('a second delivery', async () => (receiver.at('/change').length >= 2 ? true : undefined));
    const second = receiver.at('/change')[1].alert!;
    expect(new Map(second.rows.map((r) => [r.key[0], r.value]))).toEqual(
      new Map([...countsBy((m) => m['Major Genre'] === 'Comedy')].filter(([, n]) => n > 30)),
    );
    expect(second).not.toEqual(first);
    // The two deliveries and the skipped runs between them, in order.
    const o = (await outcomes()).filter((x, i, all) => i === 0 || x !== all[i - 1]);
    expect(o.slice(0, 3)).toEqual(['delivered', 'skipped', 'delivered']);
    await unschedule(id);
  });

  it.each<[{ guid?: 'search' }, unknown, RegExp]>([
    [
      { guid: 'search' },
      { total: 0, op: '>', value: 1, on: 'anyRow' },
      /^when: an alert tests a total of a crosstab report; this one is a search report$/,
    ],
    [
      {},
      { total: 'Nope', op: '>', value: 1, on: 'anyRow' },
      /^when\.total "Nope" names no total of the report; its totals are "Count \(Records\)", "Sum \(Worldwide Gross\)"/,
    ],
    [
      {},
      { total: 2, op: '>', value: 1, on: 'anyRow' },
      /^when\.total must be an index into the report's totals, from 0 to 1$/,
    ],
    [{}, { total: 0, op: '~', value: 1, on: 'anyRow' }, /^when\.op must be one of/],
    [{}, { total: 0, op: '>', value: '1', on: 'anyRow' }, /^when\.value must be a number$/],
    [{}, { total: 0, op: '>', value: 1, on: 'someRow' }, /^when\.on must be one of "anyRow", "grandTotal"$/],
    [{}, { total: 0, op: '>', value: 1 }, /^when\.on must be one of/],
    [{}, { total: 0, op: '>', value: 1, on: 'anyRow', extra: 1 }, /Unknown parameter in when: "extra"/],
    [{}, 'Count > 1', /^when must be an object with total, op, value and on$/],
  ])('refuses %j with when %j (400 naming it)', async (over, when, message) => {
    const res = await call('REPORTS.SCHEDULE', {
      guid: over.guid === 'search' ? searchGuid : crosstabGuid,
      cron: '0 8 1 1 *',
      format: 'json',
      deliver: { webhook: { url: `http://127.0.0.1:${port}/refused` } },
      when,
    });
    expect(res.error?.code).toBe(400);
    expect(res.error?.data.detail).toMatch(message);
  });

  it('runs a report with parameters at their defaults', async () => {
    const saved = await call<{ report: { guid: string } }>('CROSSTAB.EXECUTE', {
      ...crosstab,
      saveReport: {
        name: 'Films by rating, parameters',
        parameters: [{ name: 'genre', field: 'Major Genre', kind: 'values', default: ['Horror'] }],
      },
    });
    const id = await schedule(
      '/defaults',
      { total: 0, op: '>=', value: 1, on: 'anyRow' },
      {
        guid: saved.data!.report.guid,
      },
    );
    const [got] = await eventually('the delivery', async () =>
      receiver.at('/defaults').length ? receiver.at('/defaults') : undefined,
    );
    expect(new Map(got.alert!.rows.map((r) => [r.key[0], r.value]))).toEqual(
      countsBy((m) => m['Major Genre'] === 'Horror'),
    );
    // The drill query carries the default too: it counts the row's records.
    const row = got.alert!.rows[0];
    const found = await call<{ total: number }>('QUERIES.EXECUTE', {
      index: 'movies',
      query: row.drillQuery,
      pageSize: 1,
    });
    expect(found.data!.total).toBe(row.value);
    await unschedule(id);
  });

  it('names a compared total as its header does, and tests the comparison', async () => {
    const saved = await call<{ report: { guid: string } }>('CROSSTAB.EXECUTE', {
      index: 'movies',
      rows: [{ field: 'Release Date', dateGroup: 'year' }],
      totals: [
        { aggregationType: 'Count' },
        { aggregationType: 'Count', compare: { to: 'previousPeriod', as: 'difference' } },
      ],
      saveReport: { name: 'Films a year, vs the year before' },
    });
    const id = await schedule(
      '/compared',
      { total: 'count (records) vs previous year', op: '>', value: 0, on: 'anyRow' },
      { guid: saved.data!.report.guid },
    );
    const [got] = await eventually('the delivery', async () =>
      receiver.at('/compared').length ? receiver.at('/compared') : undefined,
    );
    expect(got.alert!.total).toBe('Count (Records) vs previous year');
    // Films a year in JS; the last year may be partial (compared over the same span), so it is left out.
    const perYear = new Map<number, number>();
    for (const m of records) {
      const d = m['Release Date'];
      if (typeof d === 'string') perYear.set(Number(d.slice(0, 4)), (perYear.get(Number(d.slice(0, 4))) ?? 0) + 1);
    }
    const last = Math.max(...perYear.keys());
    const rising = [...perYear]
      .filter(([y, n]) => y !== last && n - (perYear.get(y - 1) ?? 0) > 0)
      .map(([y, n]): [string, number] => [String(y), n - (perYear.get(y - 1) ?? 0)]);
    expect(rising.length).toBeGreaterThan(0);
    const matched = got
      .alert!.rows.filter((r) => r.key[0] !== String(last))
      .map((r): [string | null, number] => [r.key[0], r.value]);
    expect(new Map(matched)).toEqual(new Map(rising));
    await unschedule(id);
  });

  it('refuses to schedule a report that requires a parameter (deliveries run with the defaults)', async () => {
    const saved = await call<{ report: { guid: string } }>('CROSSTAB.EXECUTE', {
      ...crosstab,
      saveReport: {
        name: 'Films by rating, required parameter',
        parameters: [{ name: 'genre', field: 'Major Genre', kind: 'values', required: true }],
      },
    });
    const res = await call('REPORTS.SCHEDULE', {
      guid: saved.data!.report.guid,
      cron: '0 6 * * *',
      format: 'csv',
      deliver: { webhook: { url: `http://127.0.0.1:${port}/required` } },
    });
    expect(res.error?.code).toBe(400);
    expect(res.error?.data.detail).toMatch(
      /requires the parameter "genre", and a schedule runs with the parameters' defaults/,
    );
  });
});
