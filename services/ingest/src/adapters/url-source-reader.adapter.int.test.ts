import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import zlib from 'node:zlib';
import { eventually, failure, signal, stagedPast, stagingFolder } from '../../../../tests/support/source-reader-cases';
import type { SourceSpec } from '../ports/source-reader.port';
import { makeHostPolicy } from './source-host-policy';
import { UrlSourceReader } from './url-source-reader.adapter';

/** A real HTTP server on loopback, answering by path; every request it saw, with its headers. */
async function serve(
  handler: http.RequestListener,
): Promise<{ base: string; port: number; seen: http.IncomingMessage[]; close: () => Promise<void> }> {
  const seen: http.IncomingMessage[] = [];
  const server = http.createServer((req, res) => {
    seen.push(req);
    handler(req, res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    base: `http://127.0.0.1:${port}`,
    port,
    seen,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

const CSV = 'id,name,note\n1,a,"x, ""quoted""\nline"\n2,b,plain\n';

describe('UrlSourceReader against a real HTTP server', () => {
  const { staged } = stagingFolder('q-url-source-', '');
  let site: Awaited<ReturnType<typeof serve>>;
  let other: Awaited<ReturnType<typeof serve>>;
  let checked: string[];
  let reader: UrlSourceReader;
  const spec = (url: string): SourceSpec => ({ kind: 'url', connection: { url } });
  const big = 'id,pad\n' + Array.from({ length: 2000 }, (_, i) => `${i},${'x'.repeat(40)}`).join('\n') + '\n';

  beforeAll(async () => {
    other = await serve((req, res) => {
      res.writeHead(200, { 'content-type': 'text/csv' });
      res.end(`auth,${req.headers.authorization ? 'sent' : 'none'}\n`);
    });
    site = await serve((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      const hop = /^\/hop\/(\d+)$/.exec(url.pathname);
      if (hop) {
        const left = Number(hop[1]);
        res.writeHead(left > 0 ? 302 : 301, { location: left > 0 ? `/hop/${left - 1}` : '/data.csv' });
        res.end();
        return;
      }
      switch (url.pathname) {
        case '/data.csv':
          res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
          res.end(CSV);
          return;
        case '/feed':
          res.writeHead(200, { 'content-type': 'application/x-ndjson' });
          res.end('{"a":1}\n\n{"a":2}\n{"a":3}');
          return;
        case '/export':
          res.writeHead(200, { 'content-type': 'application/octet-stream' });
          res.end('a,b\n1,2\n');
          return;
        case '/zipped.csv':
          res.writeHead(200, { 'content-type': 'text/csv', 'content-encoding': 'gzip' });
          res.end(zlib.gzipSync(CSV));
          return;
        case '/file.csv.gz':
          res.writeHead(200, { 'content-type': 'application/gzip' });
          res.end(zlib.gzipSync(CSV));
          return;
        case '/bomb.csv':
          res.writeHead(200, { 'content-type': 'text/csv', 'content-encoding': 'gzip' });
          res.end(zlib.gzipSync(Buffer.alloc(50_000_000, 'a')));
          return;
        case '/big.csv':
          res.writeHead(200, { 'content-type': 'text/csv' });
          res.write(big.slice(0, 50_000));
          res.end(big.slice(50_000));
          return;
        case '/big-known.csv':
          res.writeHead(200, { 'content-type': 'text/csv', 'content-length': String(Buffer.byteLength(big)) });
          res.end(big);
          return;
        case '/auth.csv':
          if (req.headers.authorization !== `Basic ${Buffer.from('reader:s3cret pass').toString('base64')}`) {
            res.writeHead(401, { 'www-authenticate': 'Basic' });
            res.end();
            return;
          }
          res.writeHead(302, { location: `${other.base}/elsewhere.csv` });
          res.end();
          return;
        case '/to-metadata':
          res.writeHead(307, { location: 'http://169.254.169.254/latest/meta-data/' });
          res.end();
          return;
        case '/to-ftp':
          res.writeHead(302, { location: 'ftp://127.0.0.1/x.csv' });
          res.end();
          return;
        case '/no-location':
          res.writeHead(302);
          res.end();
          return;
        case '/down':
          res.writeHead(503);
          res.end('maintenance');
          return;
        case '/hang':
          return; // never answers
        case '/stall.csv':
          res.writeHead(200, { 'content-type': 'text/csv' });
          res.write('id\n1\n'); // then nothing
          return;
        case '/slow.csv': {
          res.writeHead(200, { 'content-type': 'text/csv' });
          res.write('id\n');
          const timer = setInterval(() => res.write('1\n'.repeat(1000)), 20);
          res.on('close', () => clearInterval(timer));
          return;
        }
        default:
          res.writeHead(404);
          res.end('no');
      }
    });
  });
  afterAll(async () => {
    await site.close();
    await other.close();
  });
  beforeEach(() => {
    checked = [];
    const policy = makeHostPolicy([`127.0.0.1:${site.port}`, `127.0.0.1:${other.port}`]);
    reader = new UrlSourceReader({
      hostAllowed: async (url) => {
        checked.push(url.href);
        return policy(url);
      },
      maxBytes: 1_000_000,
    });
  });

  it('streams a CSV to the staged file as it was served, its format from the path', async () => {
    const file = staged();
    const read = await reader.read(spec(`${site.base}/data.csv`), { file, signal: signal() });
    expect(read).toEqual({ file, format: 'csv', rows: 2, columns: [] });
    expect(fs.readFileSync(file, 'utf8')).toBe(CSV);
    expect((fs.statSync(file).mode & 0o777).toString(8)).toBe('600');
    expect(checked).toEqual([`${site.base}/data.csv`]);
    const feed = await reader.read(spec(`${site.base}/feed`), { file: staged(), signal: signal() });
    expect(feed).toMatchObject({ format: 'jsonl', rows: 3 });
    const unknown = await failure(reader.read(spec(`${site.base}/export?id=1`), { file: staged(), signal: signal() }));
    expect(unknown.detail).toBe(
      `Cannot tell the format of ${site.base}/export: it was sent as application/octet-stream and its path does not end in .csv, .json, .jsonl, .ndjson or .parquet`,
    );
  });

  it('inflates gzip: Content-Encoding (by fetch) and a .gz file (here)', async () => {
    const a = await reader.read(spec(`${site.base}/zipped.csv`), { file: staged(), signal: signal() });
    expect(fs.readFileSync(a.file, 'utf8')).toBe(CSV);
    const b = await reader.read(spec(`${site.base}/file.csv.gz`), { file: staged(), signal: signal() });
    expect(b.format).toBe('csv');
    expect(fs.readFileSync(b.file, 'utf8')).toBe(CSV);
  });

  it('follows a chain of redirects, checking each hop, at most 5', async () => {
    const file = staged();
    const read = await reader.read(spec(`${site.base}/hop/3`), { file, signal: signal() });
    expect(fs.readFileSync(read.file, 'utf8')).toBe(CSV);
    expect(checked).toEqual([
      `${site.base}/hop/3`,
      `${site.base}/hop/2`,
      `${site.base}/hop/1`,
      `${site.base}/hop/0`,
      `${site.base}/data.csv`,
    ]);
    const far = await failure(reader.read(spec(`${site.base}/hop/5`), { file: staged(), signal: signal() }));
    expect(far.detail).toBe(
      `The source URL ${site.base}/hop/5 redirected more than 5 times; the last hop was ${site.base}/hop/0`,
    );
    const ftp = await failure(reader.read(spec(`${site.base}/to-ftp`), { file: staged(), signal: signal() }));
    expect(ftp.detail).toBe(`The source URL ${site.base}/to-ftp redirected to ftp:, which is not http or https`);
    const none = await failure(reader.read(spec(`${site.base}/no-location`), { file: staged(), signal: signal() }));
    expect(none.detail).toBe(`The source URL ${site.base}/no-location answered HTTP 302 without a Location`);
  });

  it('refuses a redirect to a host the policy refuses, before dialling it', async () => {
    const file = staged();
    const err = await failure(reader.read(spec(`${site.base}/to-metadata`), { file, signal: signal() }));
    expect(err.code).toBe('FORBIDDEN');
    expect(err.detail).toBe('169.254.169.254:80 does not match QUARRY_SOURCE_ALLOW');
    expect(checked).toEqual([`${site.base}/to-metadata`, 'http://169.254.169.254/latest/meta-data/']);
    expect(fs.existsSync(file)).toBe(false);
    // Even through a wildcard that admits it by name, a link-local address is refused.
    const open = new UrlSourceReader({
      hostAllowed: makeHostPolicy([`127.0.0.1:${site.port}`, '*:*']),
      maxBytes: 1000,
    });
    const viaWildcard = await failure(open.read(spec(`${site.base}/to-metadata`), { file, signal: signal() }));
    expect(viaWildcard.detail).toMatch(/^169\.254\.169\.254 is a link-local address/);
  });

  it('sends URL credentials to their own origin only, and never shows them', async () => {
    const file = staged();
    const read = await reader.read(spec(`http://reader:s3cret%20pass@127.0.0.1:${site.port}/auth.csv`), {
      file,
      signal: signal(),
    });
    // The redirect led to another origin: the Authorization stayed behind.
    expect(fs.readFileSync(read.file, 'utf8')).toBe('auth,none\n');
    const wrong = await failure(
      reader.read(spec(`http://reader:wrong-pw@127.0.0.1:${site.port}/auth.csv?token=t0ps3cret`), {
        file: staged(),
        signal: signal(),
      }),
    );
    expect(wrong.detail).toBe(`The source URL ${site.base}/auth.csv answered HTTP 401 Unauthorized`);
    expect(JSON.stringify(wrong)).not.toMatch(/wrong-pw|t0ps3cret/);
  });

  it('says what a non-2xx answer was', async () => {
    const file = staged();
    const missing = await failure(reader.read(spec(`${site.base}/nothing.csv?key=abc`), { file, signal: signal() }));
    expect(missing.code).toBe('INVALID_ARGUMENT');
    expect(missing.detail).toBe(`The source URL ${site.base}/nothing.csv answered HTTP 404 Not Found`);
    const down = await failure(reader.read(spec(`${site.base}/down`), { file, signal: signal() }));
    expect(down.code).toBe('UNAVAILABLE');
    expect(down.detail).toBe(`The source URL ${site.base}/down answered HTTP 503 Service Unavailable`);
    expect(fs.existsSync(file)).toBe(false);
    const ftp = await failure(reader.read(spec('ftp://127.0.0.1/x.csv'), { file, signal: signal() }));
    expect(ftp.detail).toBe('A url source is read over http or https, not ftp');
  });

  it('stops at the byte limit, counted inflated, leaving no file', async () => {
    const small = new UrlSourceReader({ hostAllowed: makeHostPolicy([`127.0.0.1:${site.port}`]), maxBytes: 10_000 });
    for (const p of ['/big.csv', '/big-known.csv', '/bomb.csv']) {
      const file = staged();
      const err = await failure(small.read(spec(`${site.base}${p}`), { file, signal: signal() }));
      expect(err.code).toBe('PAYLOAD_TOO_LARGE');
      expect(err.detail).toBe(
        `The source URL ${site.base}${p} is larger than the limit of 10000 bytes (counted inflated); nothing was staged`,
      );
      expect(fs.existsSync(file)).toBe(false);
    }
    const read = await reader.read(spec(`${site.base}/big.csv`), { file: staged(), signal: signal() });
    expect(read.rows).toBe(2000);
    expect(fs.statSync(read.file).size).toBe(Buffer.byteLength(big));
  });

  it('bounds the wait for headers and for the next byte; an abort stops the transfer', async () => {
    const quick = new UrlSourceReader({
      hostAllowed: makeHostPolicy([`127.0.0.1:${site.port}`]),
      maxBytes: 10_000_000,
      headersTimeoutMs: 300,
      idleTimeoutMs: 300,
    });
    const file = staged();
    const hung = await failure(quick.read(spec(`${site.base}/hang`), { file, signal: signal() }));
    expect(hung.code).toBe('TIMEOUT');
    expect(hung.detail).toBe(`The source URL ${site.base}/hang did not answer within 300 ms`);
    const stalled = await failure(quick.read(spec(`${site.base}/stall.csv`), { file, signal: signal() }));
    expect(stalled.code).toBe('TIMEOUT');
    expect(stalled.detail).toBe(`The source URL ${site.base}/stall.csv sent nothing for 300 ms`);
    expect(fs.existsSync(file)).toBe(false);
    const ctl = new AbortController();
    const reading = quick.read(spec(`${site.base}/slow.csv`), { file, signal: ctl.signal });
    reading.catch(() => undefined);
    await eventually(() => stagedPast(file, 10_000), 10_000, 20, 'the transfer did not start');
    ctl.abort();
    expect((await failure(reading)).code).toBe('TIMEOUT');
    expect(fs.existsSync(file)).toBe(false);
  });

  it('dials the addresses its check answered, never asking DNS again (a rebinding name reaches nothing else)', async () => {
    // `.invalid` never resolves (RFC 6761): the read succeeds only if the connection uses the checked address.
    const asked: string[] = [];
    const pinned = new UrlSourceReader({
      hostAllowed: makeHostPolicy([`files.quarry.invalid:${site.port}`], async (host) => {
        asked.push(host);
        return [{ address: '127.0.0.1', family: 4 }];
      }),
      maxBytes: 1_000_000,
    });
    const read = await pinned.read(spec(`http://files.quarry.invalid:${site.port}/data.csv`), {
      file: staged(),
      signal: signal(),
    });
    expect(fs.readFileSync(read.file, 'utf8')).toBe(CSV);
    expect(asked).toEqual(['files.quarry.invalid']);
    expect(site.seen.at(-1)?.headers.host).toBe(`files.quarry.invalid:${site.port}`);
  });
});
