import { createHmac } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse } from 'csv-parse/sync';
import { DuckDBInstance } from '@duckdb/node-api';
import type { SMTPServer } from 'smtp-server';
import * as XLSX from 'xlsx';
import { VEGA } from './support/datasets';
import { eventually } from './support/eventually';
import { mimeParts, Receiver, startSmtp } from './support/deliveries';
import { createIdentity, type Identity } from './support/identities';
import { readPdf } from './support/pdf';
import { startStackWithData, type Stack } from './support/stack';

/*
 * Schedules deliver every export format end to end: the real server, a webhook receiver, an SMTP server;
 * the records checked against the data set's file read in plain JS, Parquet read back by DuckDB, XLSX by
 * SheetJS, PDF by tests/support/pdf.ts. Outputs over QUARRY_ATTACHMENT_MAX_BYTES (set low here) go as
 * signed links, which are then tampered with.
 */

type Movie = Record<string, unknown>;
interface Link {
  url: string;
  expiresAt: string;
  bytes: number;
}
interface WebhookBody {
  scheduleId: string;
  contentType: string;
  data?: unknown;
  link?: Link;
}

const ATTACHMENT_MAX = 100_000;
const MAX_ROWS = 2000;
const XLSX_TYPE = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';

describe('scheduled deliveries in every export format, large ones as signed links', () => {
  let stack: Stack;
  let ann: Identity;
  const receiver = new Receiver();
  let port: number;
  const mails: Array<{ to: string[]; raw: string }> = [];
  let smtp: SMTPServer;
  let tmp: string;
  let movies: Movie[];
  const guids: Record<string, string> = {};
  const titles = (rows: Array<{ Title?: unknown }>) => rows.map((r) => String(r.Title)).sort();
  const rated = (r: string) => movies.filter((m) => m['MPAA Rating'] === r);

  beforeAll(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-delivery-'));
    movies = JSON.parse(fs.readFileSync(path.join(VEGA, 'movies.json'), 'utf8')) as Movie[];
    port = await receiver.start();
    const started = await startSmtp(mails);
    smtp = started.server;
    const smtpPort = started.port;
    stack = await startStackWithData({
      env: {
        QUARRY_SCHEDULE_MIN_INTERVAL_S: '1',
        QUARRY_SCHEDULES_PER_USER: '40',
        QUARRY_WEBHOOK_ALLOW: `127.0.0.1:${port}`,
        QUARRY_SMTP_URL: `smtp://127.0.0.1:${smtpPort}`,
        QUARRY_DELIVERY_BACKOFF_MS: '200',
        QUARRY_ATTACHMENT_MAX_BYTES: String(ATTACHMENT_MAX),
        QUARRY_EXPORT_MAX_ROWS: String(MAX_ROWS),
      },
    });
    ann = await createIdentity(stack.dataDir, 'ann', { indexes: '*' });
    const save = async (name: string, method: string, params: Record<string, unknown>) => {
      const res = await stack.call<{ report: { guid: string } }>(ann, method, { ...params, saveReport: { name } });
      if (res.error) throw new Error(JSON.stringify(res.error));
      guids[name] = res.data!.report.guid;
    };
    // Saved with a page of 5: a delivery is every matching record all the same.
    await save('G movies', 'QUERIES.EXECUTE', { index: 'movies', query: '(MPAA Rating):G', pageSize: 5 });
    await save('R movies', 'QUERIES.EXECUTE', { index: 'movies', query: '(MPAA Rating):R', pageSize: 5 });
    await save('All movies', 'QUERIES.EXECUTE', { index: 'movies', query: '*', pageSize: 5 });
    await save('Ratings', 'CROSSTAB.EXECUTE', {
      index: 'movies',
      rows: ['MPAA Rating'],
      totals: [{ aggregationType: 'Count' }],
    });
  }, 180000);

  afterAll(async () => {
    await stack?.quarry.stop();
    await receiver.stop();
    await new Promise<void>((resolve) => smtp?.close(() => resolve()));
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  const schedule = async (report: string, format: string, deliver: Record<string, unknown>) => {
    for (;;) {
      const res = await stack.call<{ scheduleId: string }>(ann, 'REPORTS.SCHEDULE', {
        guid: guids[report],
        cron: '0 8 1 1 *',
        format,
        deliver,
        runNow: true,
      });
      // runNow of one report comes at most every QUARRY_SCHEDULE_MIN_INTERVAL_S: wait for the turn.
      if (!res.error?.data.detail.startsWith('runNow:')) return res;
      await new Promise((r) => setTimeout(r, 250));
    }
  };
  const webhook = (p: string) => ({ webhook: { url: `http://127.0.0.1:${port}${p}` } });
  async function delivered(report: string, format: string): Promise<WebhookBody> {
    const at = `/${report.replace(/\W/g, '')}/${format}`;
    const made = await schedule(report, format, webhook(at));
    expect(made.error).toBeUndefined();
    const [got] = await eventually(`the ${format} webhook`, async () =>
      receiver.at(at).length ? receiver.at(at) : undefined,
    );
    return JSON.parse(got.body) as WebhookBody;
  }

  it('a search report delivers every matching record as csv, jsonl, json, parquet and xlsx (not its saved page)', async () => {
    const expected = titles(rated('G'));
    expect(expected.length).toBeGreaterThan(5);

    const csv = await delivered('G movies', 'csv');
    expect(csv.contentType).toBe('text/csv');
    expect(titles(parse(String(csv.data), { columns: true }) as Movie[])).toEqual(expected);

    const jsonl = await delivered('G movies', 'jsonl');
    expect(jsonl.contentType).toBe('application/jsonl');
    const lines = String(jsonl.data).trim().split('\n');
    expect(titles(lines.map((l) => JSON.parse(l) as Movie))).toEqual(expected);

    const json = await delivered('G movies', 'json');
    expect(json.contentType).toBe('application/json');
    expect(Array.isArray(json.data)).toBe(true);
    expect(titles(json.data as Movie[])).toEqual(expected);
    // The records as the data set has them (numbers stay numbers).
    const heat = (json.data as Movie[]).find((m) => m.Title === expected[0]);
    const source = rated('G').find((m) => String(m.Title) === expected[0]);
    expect(heat?.['US Gross']).toBe(source?.['US Gross']);

    const parquet = await delivered('G movies', 'parquet');
    expect(parquet.contentType).toBe('application/vnd.apache.parquet');
    const file = path.join(tmp, 'g.parquet');
    fs.writeFileSync(file, Buffer.from(String(parquet.data), 'base64'));
    const db = await DuckDBInstance.create(':memory:');
    const c = await db.connect();
    const read = await c.runAndReadAll(`SELECT "Title" FROM read_parquet('${file}')`);
    expect(titles(read.getRowObjects() as Movie[])).toEqual(expected);
    c.closeSync();

    const xlsx = await delivered('G movies', 'xlsx');
    expect(xlsx.contentType).toBe(XLSX_TYPE);
    const book = XLSX.read(Buffer.from(String(xlsx.data), 'base64'), { type: 'buffer' });
    expect(book.SheetNames).toEqual(['movies']);
    const rows = XLSX.utils.sheet_to_json<Movie>(book.Sheets.movies);
    expect(titles(rows)).toEqual(expected);
    // A hang guard: five deliveries one after the other, each at least a second apart, on a loaded machine.
  }, 180_000);

  it('e-mails a search as an xlsx attachment and a crosstab as a pdf attachment', async () => {
    const before = mails.length;
    expect((await schedule('G movies', 'xlsx', { email: { to: ['ann@example.com'] } })).error).toBeUndefined();
    expect((await schedule('Ratings', 'pdf', { email: { to: ['ann@example.com'] } })).error).toBeUndefined();
    const got = await eventually('two mails', async () =>
      mails.length >= before + 2 ? mails.slice(before) : undefined,
    );
    // By the file's extension: a long Content-Type header is folded over lines.
    const attachment = (ext: string) => {
      const mail = got.find((m) => new RegExp(`filename=[^\r\n]*\\.${ext}\r\n`).test(m.raw));
      const part = mimeParts(mail?.raw ?? '').find((p) => /Content-Disposition: attachment/i.test(p.headers));
      return { headers: part?.headers ?? '', bytes: Buffer.from((part?.body ?? '').replace(/\s+/g, ''), 'base64') };
    };
    const workbook = attachment('xlsx');
    expect(workbook.headers).toMatch(/filename=G-movies-\d{4}-\d\d-\d\d-\d\d-\d\d\.xlsx/);
    const rows = XLSX.utils.sheet_to_json<Movie>(XLSX.read(workbook.bytes, { type: 'buffer' }).Sheets.movies);
    expect(titles(rows)).toEqual(titles(rated('G')));
    const pdf = attachment('pdf');
    expect(pdf.headers).toMatch(/Content-Type: application\/pdf/);
    expect(pdf.headers).toMatch(/filename=Ratings-.*\.pdf/);
    const [page] = readPdf(pdf.bytes);
    const text = page.text.normalize('NFKC').replace(/\s+/g, '');
    // Each rating's count, as the data set has it, beside its label.
    for (const r of ['G', 'PG', 'R', 'NC-17']) expect(text).toContain(`${r}${rated(r).length}`);
    expect(text).toContain(`Total${movies.length}`);
    // A hang guard: the PDF is printed by Chromium, which may start cold on a loaded machine.
  }, 180_000);

  it('an output over QUARRY_ATTACHMENT_MAX_BYTES goes as a signed link that needs no token; a changed or expired one does not open', async () => {
    const csv = await delivered('R movies', 'csv');
    expect(csv.data).toBeUndefined();
    const link = csv.link!;
    expect(link.bytes).toBeGreaterThan(ATTACHMENT_MAX);
    expect(Date.parse(link.expiresAt) - Date.now()).toBeGreaterThan(6 * 86400_000);
    expect(link.url).toMatch(new RegExp(`^${stack.quarry.baseUrl}/exports/signed/[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]{43}$`));
    const res = await fetch(link.url);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(res.headers.get('content-disposition')).toMatch(/^attachment; filename="R-movies-[\d-]+\.csv"$/);
    const body = Buffer.from(await res.arrayBuffer());
    expect(body.length).toBe(link.bytes);
    expect(titles(parse(body, { columns: true }) as Movie[])).toEqual(titles(rated('R')));

    // The same by e-mail: the link in the text, nothing attached.
    const before = mails.length;
    expect((await schedule('R movies', 'jsonl', { email: { to: ['ann@example.com'] } })).error).toBeUndefined();
    const mail = await eventually('the mail', async () => mails[before]);
    expect(mail.raw).not.toMatch(/Content-Disposition: attachment/i);
    const mailed = /(http:\/\/127\.0\.0\.1:\d+\/exports\/signed\/[A-Za-z0-9_.=-]+)/.exec(
      mail.raw.replace(/=\r\n/g, ''),
    );
    expect(mailed).not.toBeNull();
    const other = await fetch(mailed![1].replace(/=3D/g, '='));
    expect(other.status).toBe(200);
    expect((await other.text()).trim().split('\n')).toHaveLength(rated('R').length);

    // Tampered: a signature changed, another delivery's file under this signature, a truncated or huge token.
    const [payload, sig] = link.url.split('/exports/signed/')[1].split('.');
    const [otherPayload] = mailed![1].split('/exports/signed/')[1].split('.');
    const flipped = `${sig.slice(0, 10)}${sig[10] === 'A' ? 'B' : 'A'}${sig.slice(11)}`;
    const at = (token: string) => fetch(`${stack.quarry.baseUrl}/exports/signed/${token}`).then((r) => r.status);
    expect(await at(`${payload}.${flipped}`)).toBe(404);
    expect(await at(`${otherPayload}.${sig}`)).toBe(404);
    expect(await at(payload)).toBe(404);
    expect(await at(`${payload}.${sig}`.repeat(20))).toBe(404);
    expect(await at('..%2F..%2Fwebhook.key')).toBe(404);
    // A bearer token is no substitute for the signature.
    const withToken = await fetch(`${stack.quarry.baseUrl}/exports/signed/${payload}.${flipped}`, {
      headers: { Authorization: `Bearer ${ann.token}` },
    });
    expect(withToken.status).toBe(404);

    // Signed with the deployment's key (the data dir's link.key, as a second gateway would hold it):
    // past its expiry it is 410; in time but for a file that is not kept, 410 too.
    const key = fs.readFileSync(path.join(stack.dataDir, 'link.key'));
    const decoded = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>;
    const sign = (fields: Record<string, unknown>) => {
      const p = Buffer.from(JSON.stringify(fields), 'utf8').toString('base64url');
      return `${p}.${createHmac('sha256', key).update(`quarry-delivery-link.${p}`).digest('base64url')}`;
    };
    expect(await at(sign(decoded))).toBe(200);
    expect(await at(sign({ ...decoded, x: Math.floor(Date.now() / 1000) - 1 }))).toBe(410);
    expect(await at(sign({ ...decoded, i: 'f'.repeat(32) }))).toBe(410);
    expect(await at(sign({ ...decoded, n: '../../etc/passwd' }))).toBe(404);
  });

  it("a signed link opens only while its schedule's owner may read the report: disabled, revoked, deleted", async () => {
    const lou = await createIdentity(stack.dataDir, 'lou', { indexes: '*' });
    const linkFor = async (name: string) => {
      const saved = await stack.data<{ report: { guid: string } }>(lou, 'QUERIES.EXECUTE', {
        index: 'movies',
        query: '(MPAA Rating):R',
        saveReport: { name },
      });
      const at = `/lou/${name.replace(/\W/g, '')}`;
      const made = await stack.call(lou, 'REPORTS.SCHEDULE', {
        guid: saved.report.guid,
        cron: '0 8 1 1 *',
        format: 'csv',
        deliver: webhook(at),
        runNow: true,
      });
      expect(made.error).toBeUndefined();
      const [got] = await eventually('the webhook', async () => (receiver.at(at).length ? receiver.at(at) : undefined));
      return { guid: saved.report.guid, url: (JSON.parse(got.body) as WebhookBody).link!.url };
    };
    const opened = async (url: string) => {
      const res = await fetch(url);
      const text = await res.text();
      return res.status === 403 ? `403 ${(JSON.parse(text) as { detail: string }).detail}` : String(res.status);
    };
    const refused = "403 This link no longer opens: its schedule's owner may no longer read the report it delivered";
    // A change of the owner's standing reaches every gateway within the credential cache's life: waited for.
    const becomes = (url: string, want: string) =>
      eventually(`the link to answer ${want}`, async () => ((await opened(url)) === want ? true : undefined));

    const first = await linkFor('Lou one');
    expect(await opened(first.url)).toBe('200');
    // The owner disabled: refused; enabled again: it opens again (asked at each opening, not burned).
    expect((await stack.cli(['user', 'disable', 'lou'])).code).toBe(0);
    await becomes(first.url, refused);
    expect((await stack.cli(['user', 'enable', 'lou'])).code).toBe(0);
    await becomes(first.url, '200');
    // The report deleted: refused.
    expect((await stack.call(lou, 'REPORTS.DELETE', { guid: first.guid })).error).toBeUndefined();
    await becomes(first.url, refused);
    // The schedule's token revoked: refused, for a link of another report too.
    const second = await linkFor('Lou two');
    expect(await opened(second.url)).toBe('200');
    expect((await stack.cli(['token', 'revoke', lou.tokenId])).code).toBe(0);
    await becomes(second.url, refused);
  });

  it('a search over QUARRY_EXPORT_MAX_ROWS stops its schedule, saying why', async () => {
    const made = await schedule('All movies', 'csv', webhook('/all'));
    expect(made.error).toBeUndefined();
    const stopped = await eventually('the stop', async () => {
      const res = await stack.call<{ schedules: Array<{ scheduleId: string; status: string; stoppedReason: string }> }>(
        ann,
        'REPORTS.SCHEDULES',
        { guid: guids['All movies'] },
      );
      const s = res.data?.schedules.find((x) => x.scheduleId === made.data!.scheduleId);
      return s?.status === 'stopped' ? s : undefined;
    });
    expect(stopped.stoppedReason).toContain(
      `matches ${movies.length} records, more than QUARRY_EXPORT_MAX_ROWS (${MAX_ROWS})`,
    );
    expect(receiver.at('/all')).toHaveLength(0);
  });

  it('refuses a format the report has not, with a 400 naming format', async () => {
    const cases: Array<[string, string, RegExp]> = [
      ['Ratings', 'parquet', /^format: parquet is for search reports/],
      ['Ratings', 'jsonl', /^format: jsonl is for search reports/],
      ['G movies', 'pdf', /^format: a search report is delivered as csv, xlsx, parquet, jsonl, json, not pdf/],
      ['G movies', 'png', /^format: a search report is delivered as/],
      ['Ratings', 'png', /^format: png needs a report saved as a chart/],
      ['Ratings', 'docx', /^format must be one of/],
    ];
    for (const [report, format, detail] of cases) {
      const res = await schedule(report, format, webhook('/refused'));
      expect({ report, format, code: res.error?.code, detail: res.error?.data.detail }).toEqual({
        report,
        format,
        code: 400,
        detail: expect.stringMatching(detail),
      });
    }
    expect(receiver.at('/refused')).toHaveLength(0);
  });
});
