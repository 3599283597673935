import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { DuckDBInstance } from '@duckdb/node-api';
import { createIdentity, type Identity } from './support/identities';
import { REPO_ROOT, startQuarry } from './support/quarry-process';
import { startStackWithData, typedCall, type Stack } from './support/stack';

const VEGA = path.join(REPO_ROOT, 'node_modules', 'vega-datasets', 'data');
const WRITE = 'query:execute,indexes:read,indexes:write,embed:create';
const MAX_MB = 1;

interface Answer {
  status: number;
  type: string;
  body: Record<string, unknown> & {
    index?: string;
    version?: number;
    rowsRead?: number;
    loaded?: number;
    rejected?: number;
    replaced?: number;
    recordCount?: number;
    detail?: string;
    rejects?: Array<{ line?: number; record?: number; column?: string; reason: string }>;
  };
}

/*
 * Uploads (POST /indexes/<name>/records) end to end: the real server, the ingest service behind the
 * gateway, the loader of `quarry index load`. Who may write, what each mode publishes, what a failed load
 * says and keeps, and every limit tried with a body built to break it.
 */
describe('uploads: POST /indexes/<name>/records', () => {
  let stack: Stack;
  let tmp: string;
  let ann: Identity; // reads movies only, writes what she creates
  let bob: Identity; // reads everything, owns nothing
  let admin: Identity;
  let reader: Identity; // no indexes:write

  // The stack's own call helper keeps the first server's address; the split one replaces it below.
  const call = typedCall(() => stack.quarry.baseUrl);
  const url = (name: string, query = '') => new URL(`/indexes/${name}/records${query}`, stack.quarry.baseUrl);

  async function upload(
    who: Identity | string | undefined,
    name: string,
    body: BodyInit,
    opts: { query?: string; type?: string; headers?: Record<string, string> } = {},
  ): Promise<Answer> {
    const token = typeof who === 'string' ? who : who?.token;
    const res = await fetch(url(name, opts.query), {
      method: 'POST',
      headers: {
        ...(token ? { Authorization: `Bearer ${token}` } : {}),
        'Content-Type': opts.type ?? 'text/csv',
        ...(opts.headers ?? {}),
      },
      body,
      // A stream body needs the request to be sent as it is produced.
      ...(typeof body === 'object' && body !== null && 'getReader' in body ? { duplex: 'half' } : {}),
    } as RequestInit);
    const text = await res.text();
    return { status: res.status, type: res.headers.get('content-type') ?? '', body: text ? JSON.parse(text) : {} };
  }

  async function search(who: Identity, index: string, query = '*', sortField?: string) {
    const res = await call<{ total: number; records: Array<Record<string, unknown>> }>(who, 'QUERIES.EXECUTE', {
      index,
      query,
      pageSize: 100,
      ...(sortField ? { sort: [{ field: sortField, direction: 'asc' }] } : {}),
    });
    return res;
  }

  const leftovers = () =>
    fs.existsSync(path.join(stack.dataDir, 'tmp'))
      ? fs.readdirSync(path.join(stack.dataDir, 'tmp')).filter((n) => n.startsWith('upload-'))
      : [];

  beforeAll(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-uploads-'));
    stack = await startStackWithData({ env: { QUARRY_UPLOAD_MAX_MB: String(MAX_MB) } });
    ann = await createIdentity(stack.dataDir, 'ann', { indexes: 'movies', scopes: WRITE });
    bob = await createIdentity(stack.dataDir, 'bob', { indexes: '*', scopes: WRITE });
    admin = await createIdentity(stack.dataDir, 'root', { admin: true, scopes: WRITE });
    reader = await createIdentity(stack.dataDir, 'rita', { indexes: '*', scopes: 'query:execute,indexes:read' });
  }, 600_000);

  afterAll(async () => {
    await stack?.quarry.stop();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('a CSV creates an index its uploader owns and reads, with every row accounted for', async () => {
    const csv = 'id,name,price\n1,apple,1.5\n2,pear,2.25\n3,plum,0.75\n';
    const a = await upload(ann, 'fruit', csv);
    expect(a.status).toBe(200);
    expect(a.type).toMatch(/^application\/json/);
    expect(a.body).toMatchObject({ index: 'fruit', version: 1, rowsRead: 3, loaded: 3, rejected: 0, rejects: [] });
    expect(typeof a.body.durationMs).toBe('number');
    // Ann's grants name movies only: she reads fruit because she created it.
    const found = await search(ann, 'fruit', '*', 'id');
    expect(found.data?.total).toBe(3);
    expect(found.data?.records.map((r) => r.name)).toEqual(['apple', 'pear', 'plum']);
    const listed = await stack.data<{ indexes: Array<{ name: string }> }>(ann, 'INDEXES.FIND', {});
    expect(listed.indexes.map((i) => i.name).sort()).toEqual(['fruit', 'movies']);
    // The numbers are the loader's: price is a number, id an integer.
    const fields = (
      await stack.data<{ fields: Array<{ name: string; type: string }> }>(ann, 'QUERIES.EXECUTE', {
        index: 'fruit',
        query: '*',
      })
    ).fields;
    expect(fields).toEqual([
      { name: 'id', type: 'integer' },
      { name: 'name', type: 'string' },
      { name: 'price', type: 'number' },
    ]);
  });

  it('only its owner or an admin writes an index; others are told why, and nothing changes', async () => {
    // Bob reads fruit (indexes "*") but did not create it.
    const byBob = await upload(bob, 'fruit', 'id,name,price\n9,fig,3\n');
    expect(byBob.status).toBe(403);
    expect(byBob.type).toMatch(/^application\/problem\+json/);
    expect(byBob.body.detail).toBe('Index "fruit" may be written only by its owner or an admin');
    // Ann cannot read flights (loaded by the CLI, owned by no one): only that the name is taken.
    const byAnn = await upload(ann, 'flights', 'iata,name\nXXX,nowhere\n');
    expect(byAnn.status).toBe(403);
    expect(byAnn.body.detail).toBe('The index name "flights" is taken; choose another');
    // An admin may write any index, and the owner stays who created it.
    const byAdmin = await upload(admin, 'fruit', 'id,name,price\n1,apple,1.5\n2,pear,2.25\n3,plum,0.75\n4,kiwi,1\n');
    expect(byAdmin.body).toMatchObject({ version: 2, loaded: 4 });
    const again = await upload(bob, 'fruit', 'id,name,price\n9,fig,3\n');
    expect(again.status).toBe(403);
    expect((await search(ann, 'fruit')).data?.total).toBe(4);
    // Without indexes:write, no write at all; an embed token never writes.
    const byReader = await upload(reader, 'fresh', 'a\n1\n');
    expect(byReader.status).toBe(403);
    expect(byReader.body.detail).toBe('Writing an index needs a token with the indexes:write scope');
    const embed = await stack.data<{ token: string }>(ann, 'TOKENS.EMBED', { index: 'fruit', ttlSeconds: 600 });
    const byEmbed = await upload(embed.token, 'fruit', 'id,name,price\n9,fig,3\n');
    expect(byEmbed.status).toBe(403);
    expect(byEmbed.body.detail).toBe('An embed token cannot write an index');
    const anonymous = await upload(undefined, 'fruit', 'id\n1\n');
    expect(anonymous.status).toBe(401);
    expect((await search(ann, 'fruit')).data?.total).toBe(4);
  });

  it('append adds gzipped JSON Lines after the published rows; upsert replaces by key and appends the rest', async () => {
    const lines = '{"id":5,"name":"lime","price":0.5}\n{"id":6,"name":"date","price":4}\n';
    const appended = await upload(ann, 'fruit', zlib.gzipSync(lines), {
      query: '?mode=append',
      type: 'application/x-ndjson',
      headers: { 'Content-Encoding': 'gzip' },
    });
    expect(appended.status).toBe(200);
    expect(appended.body).toMatchObject({ version: 3, rowsRead: 2, loaded: 2, recordCount: 6 });
    const upserted = await upload(ann, 'fruit', 'id,name,price\n2,pear,9.99\n7,mango,3.5\n', {
      query: '?mode=upsert&key=id',
    });
    expect(upserted.status).toBe(200);
    expect(upserted.body).toMatchObject({ version: 4, rowsRead: 2, loaded: 2, replaced: 1, recordCount: 7 });
    const rows = (await search(ann, 'fruit', '*', 'id')).data!.records.map((r) => [r.id, r.name, r.price]);
    expect(rows).toEqual([
      [1, 'apple', 1.5],
      [2, 'pear', 9.99],
      [3, 'plum', 0.75],
      [4, 'kiwi', 1],
      [5, 'lime', 0.5],
      [6, 'date', 4],
      [7, 'mango', 3.5],
    ]);
    // A key repeated in the upload is a rejected row naming both lines; the version stays.
    const repeated = await upload(ann, 'fruit', 'id,name,price\n8,a,1\n8,b,2\n', { query: '?mode=upsert&key=id' });
    expect(repeated.status).toBe(400);
    expect(repeated.body.detail).toMatch(/the upload:3, column "id": repeats the key id="8" of line 2/);
    expect(repeated.body).toMatchObject({ loaded: 0, rejected: 1, rejects: [{ line: 3, column: 'id' }] });
    expect((await search(ann, 'fruit')).data?.total).toBe(7);
  });

  it('a Parquet body of real data loads as the CLI would load it', async () => {
    const file = path.join(tmp, 'airports.parquet');
    const db = await DuckDBInstance.create(':memory:');
    const c = await db.connect();
    const read = await c.runAndReadAll(
      `COPY (SELECT * FROM read_csv('${path.join(VEGA, 'airports.csv')}')) TO '${file}' (FORMAT parquet)`,
    );
    const written = Number(Object.values(read.getRowObjects()[0] ?? { n: 0 })[0] ?? 0);
    const counted = await c.runAndReadAll(
      `SELECT count(*) AS n, count(*) FILTER (WHERE state = 'CA') AS ca FROM '${file}'`,
    );
    const { n, ca } = counted.getRowObjects()[0] as { n: bigint; ca: bigint };
    c.closeSync();
    db.closeSync();
    const a = await upload(admin, 'airports2', fs.readFileSync(file), { type: 'application/vnd.apache.parquet' });
    expect(a.status).toBe(200);
    expect(a.body).toMatchObject({ version: 1, rowsRead: Number(n), loaded: Number(n), rejected: 0 });
    expect(written === 0 || written === Number(n)).toBe(true);
    expect((await search(admin, 'airports2', 'state:CA')).data?.total).toBe(Number(ca));
  });

  it('a malformed row fails a strict load with its line and publishes nothing; skip publishes the rest and lists them', async () => {
    const before = (await search(ann, 'fruit')).data!.total;
    const bad = 'id,name,price\n1,apple,1.5\n2,pear\n3,plum,0.75\n';
    const strict = await upload(ann, 'fruit', bad);
    expect(strict.status).toBe(400);
    expect(strict.type).toMatch(/^application\/problem\+json/);
    expect(strict.body.detail).toBe(
      'the upload:3, column "price": the row has 2 fields where the header has 3. Nothing was published; fix the file, or load with onError=skip to publish the other rows and list the rejected ones',
    );
    expect(strict.body).toMatchObject({ index: 'fruit', loaded: 0, rejected: 1, rejects: [{ line: 3 }] });
    expect(strict.body.version).toBeUndefined();
    expect((await search(ann, 'fruit')).data!.total).toBe(before);
    const skipped = await upload(ann, 'fruit', bad, { query: '?onError=skip&maxErrors=5' });
    expect(skipped.status).toBe(200);
    expect(skipped.body).toMatchObject({ rowsRead: 3, loaded: 2, rejected: 1, rejects: [{ line: 3 }] });
    expect(skipped.body.rowsRead).toBe((skipped.body.loaded ?? 0) + (skipped.body.rejected ?? 0));
    expect((await search(ann, 'fruit')).data!.total).toBe(2);
  });

  it('refuses what it cannot read before reading it, naming the problem', async () => {
    const cases: Array<[string, Promise<Answer>, number, RegExp]> = [
      [
        'unknown parameter',
        upload(ann, 'fruit', 'a\n1\n', { query: '?mode=replace&force=1' }),
        400,
        /Unknown parameter "force"/,
      ],
      [
        'a repeated parameter',
        upload(ann, 'fruit', 'a\n1\n', { query: '?mode=append&mode=upsert' }),
        400,
        /mode is given once/,
      ],
      [
        'a bad mode',
        upload(ann, 'fruit', 'a\n1\n', { query: '?mode=merge' }),
        400,
        /mode must be replace, append or upsert/,
      ],
      ['upsert without key', upload(ann, 'fruit', 'a\n1\n', { query: '?mode=upsert' }), 400, /mode=upsert needs key/],
      ['key without upsert', upload(ann, 'fruit', 'a\n1\n', { query: '?key=id' }), 400, /key goes with mode=upsert/],
      [
        'maxErrors without skip',
        upload(ann, 'fruit', 'a\n1\n', { query: '?maxErrors=3' }),
        400,
        /maxErrors goes with onError=skip/,
      ],
      [
        'a negative maxErrors',
        upload(ann, 'fruit', 'a\n1\n', { query: '?onError=skip&maxErrors=-1' }),
        400,
        /maxErrors must be a whole number/,
      ],
      ['an unknown media type', upload(ann, 'fruit', 'a\n1\n', { type: 'text/plain' }), 415, /Content-Type must be/],
      [
        'an unknown encoding',
        upload(ann, 'fruit', 'a\n1\n', { headers: { 'Content-Encoding': 'br' } }),
        415,
        /Content-Encoding must be gzip/,
      ],
      ['a name no index can bear', upload(ann, '..%2Fetc', 'a\n1\n'), 400, /is not an index name/],
      [
        'a body that is not gzip',
        upload(ann, 'fresh', 'a\n1\n', { headers: { 'Content-Encoding': 'gzip' } }),
        400,
        /not valid gzip/,
      ],
      ['an empty body', upload(ann, 'fresh', ''), 400, /empty/i],
    ];
    for (const [what, answer, status, detail] of cases) {
      const a = await answer;
      expect({ what, status: a.status }).toEqual({ what, status });
      expect({ what, detail: a.body.detail }).toEqual({ what, detail: expect.stringMatching(detail) });
    }
    // None of them published or kept anything.
    expect((await search(ann, 'fruit')).data!.total).toBe(2);
    expect((await stack.call(admin, 'QUERIES.EXECUTE', { index: 'fresh', query: '*' })).error?.code).toBe(404);
    expect(leftovers()).toEqual([]);
  });

  it('holds every body to QUARRY_UPLOAD_MAX_MB: declared, streamed without a length, and inflated from gzip', async () => {
    const big = `v\n${'1234567\n'.repeat(((MAX_MB * 1_048_576) / 8) | 0)}9\n`;
    const declared = await upload(ann, 'huge', big);
    expect(declared.status).toBe(413);
    expect(declared.body.detail).toMatch(/more than QUARRY_UPLOAD_MAX_MB \(1 MB\); nothing was read/);
    // Without a Content-Length the bytes are counted as they come.
    const encoder = new TextEncoder();
    const chunked = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < 20; i++) controller.enqueue(encoder.encode('1234567\n'.repeat(16_384)));
        controller.close();
      },
    });
    const streamed = await upload(ann, 'huge', chunked);
    expect(streamed.status).toBe(413);
    expect(streamed.body.detail).toMatch(/exceeds QUARRY_UPLOAD_MAX_MB \(1 MB\)/);
    // 50 MB of one byte, gzipped to about 50 KB: refused at the limit once inflated, not after 50 MB.
    const bomb = zlib.gzipSync(Buffer.alloc(50 * 1_048_576, 0x31), { level: 9 });
    expect(bomb.length).toBeLessThan(MAX_MB * 1_048_576);
    const inflated = await upload(ann, 'huge', bomb, { headers: { 'Content-Encoding': 'gzip' } });
    expect(inflated.status).toBe(413);
    expect(inflated.body.detail).toMatch(/exceeds QUARRY_UPLOAD_MAX_MB \(1 MB once gzip is undone\)/);
    expect((await stack.call(admin, 'QUERIES.EXECUTE', { index: 'huge', query: '*' })).error?.code).toBe(404);
    expect(leftovers()).toEqual([]);
    // The server still answers.
    expect((await search(ann, 'fruit')).data!.total).toBe(2);
  });

  it('JSON nested 100,000 deep is a clear 400 naming where, not a crash', async () => {
    const deep = `[{"a":${'['.repeat(100_000)}${']'.repeat(100_000)}}]`;
    const a = await upload(ann, 'deep', deep, { type: 'application/json' });
    expect(a.status).toBe(400);
    expect(a.body.detail).toBe(
      'the upload:1: nested deeper than 64 levels of objects and arrays at column 70. Nothing was published',
    );
    // In JSON Lines the line too deep is a rejected row like any other: skipped, the rest publishes.
    const lines = `{"a":1}\n{"a":${'['.repeat(100_000)}${']'.repeat(100_000)}}\n{"a":3}\n`;
    const skipped = await upload(ann, 'deep', lines, { type: 'application/x-ndjson', query: '?onError=skip' });
    expect(skipped.status).toBe(200);
    expect(skipped.body).toMatchObject({
      rowsRead: 3,
      loaded: 2,
      rejected: 1,
      rejects: [{ line: 2, reason: 'nested deeper than 64 levels of objects and arrays at character 69' }],
    });
    expect((await search(ann, 'fruit')).data!.total).toBe(2);
  });

  it('a client that goes away in the middle of its body publishes nothing and leaves nothing behind', async () => {
    const controller = new AbortController();
    let sent = 0;
    const encoder = new TextEncoder();
    const body = new ReadableStream<Uint8Array>({
      async pull(c) {
        // Node 20's fetch does not cancel a request body when its signal aborts: a body that goes on
        // producing after the abort would keep this worker busy (and alive) for the rest of the run.
        if (controller.signal.aborted) {
          c.close();
          return;
        }
        sent += 1;
        if (sent === 1) c.enqueue(encoder.encode('id,name\n'));
        else c.enqueue(encoder.encode(`${sent},row\n`.repeat(1000)));
        // Gone after some of the body: the server has been reading it (the spool's file exists by then).
        if (sent === 20) controller.abort();
        await new Promise((r) => setImmediate(r));
      },
    });
    await expect(
      fetch(url('halfway'), {
        method: 'POST',
        headers: { Authorization: `Bearer ${ann.token}`, 'Content-Type': 'text/csv' },
        body,
        duplex: 'half',
        signal: controller.signal,
      } as RequestInit),
    ).rejects.toThrow();
    // The cancellation reaches the ingest service; its spool file goes once it has.
    for (const end = Date.now() + 60_000; leftovers().length > 0 && Date.now() < end;)
      await new Promise((r) => setTimeout(r, 20));
    expect(leftovers()).toEqual([]);
    expect((await call(admin, 'QUERIES.EXECUTE', { index: 'halfway', query: '*' })).error?.code).toBe(404);
    expect((await search(ann, 'fruit')).data!.total).toBe(2);
  });

  it('an Idempotency-Key makes a retried append load once: the same bytes get the first answer, other bytes a 409', async () => {
    const first = 'id,amount\n1,10\n2,20\n';
    const created = await upload(bob, 'ledger', first);
    expect(created.body).toMatchObject({ version: 1, recordCount: 2 });
    const rows = 'id,amount\n3,30\n4,40\n';
    const key = { 'Idempotency-Key': 'ledger-append-1' };
    const appended = await upload(bob, 'ledger', rows, { query: '?mode=append', headers: key });
    expect(appended.body).toMatchObject({ version: 2, loaded: 2, recordCount: 4 });
    // The retries after a lost answer: one after it, and three racing each other.
    const again = await upload(bob, 'ledger', rows, { query: '?mode=append', headers: key });
    const racing = await Promise.all(
      [1, 2, 3].map(() => upload(bob, 'ledger', Buffer.from(rows), { query: '?mode=append', headers: key })),
    );
    for (const a of [again, ...racing]) expect([a.status, a.body]).toEqual([200, appended.body]);
    expect((await search(bob, 'ledger')).data?.total).toBe(4);
    // Another body, other parameters or another index under the key: 409, and nothing is loaded.
    const other = await upload(bob, 'ledger', 'id,amount\n5,50\n', { query: '?mode=append', headers: key });
    expect([other.status, other.body.detail]).toEqual([
      409,
      'Idempotency-Key "ledger-append-1" was used in the last 24 h for an upload of another body; send a new key for a new upload',
    ]);
    const replace = await upload(bob, 'ledger', rows, { query: '?mode=replace', headers: key });
    expect(replace.status).toBe(409);
    expect(replace.body.detail).toMatch(/with another upload \(index or parameters\)/);
    // Keys are the token's own: the admin's same key is a new upload (an admin writes any index).
    const adminAppend = await upload(admin, 'ledger', rows, { query: '?mode=append', headers: key });
    expect(adminAppend.body).toMatchObject({ version: 3, recordCount: 6 });
    // A malformed key is refused before a byte is read.
    const bad = await upload(bob, 'ledger', rows, {
      query: '?mode=append',
      headers: { 'Idempotency-Key': 'two words' },
    });
    expect([bad.status, bad.body.detail]).toEqual([
      400,
      'Idempotency-Key must be 1 to 255 visible ASCII characters (a UUID is a good one)',
    ]);
    // A failed strict load publishes nothing, and a retry under its key is told the same.
    const broken = 'id,amount\n7,seven\n';
    const failKey = { 'Idempotency-Key': 'ledger-broken' };
    const failed = await upload(bob, 'ledger', broken, { query: '?mode=append', headers: failKey });
    expect(failed.status).toBe(400);
    const failedAgain = await upload(bob, 'ledger', broken, { query: '?mode=append', headers: failKey });
    const { durationMs: _d1, ...failure } = failed.body;
    const { durationMs: _d2, ...failureAgain } = failedAgain.body;
    expect([failedAgain.status, failureAgain]).toEqual([400, failure]);
    expect((await search(bob, 'ledger')).data?.total).toBe(6);
  });

  it('two users creating one name at once: one owns it, the other is refused, and its rows are the owner’s', async () => {
    const [x, y] = await Promise.all([upload(ann, 'contested', 'who\nann\n'), upload(bob, 'contested', 'who\nbob\n')]);
    const statuses = [x.status, y.status].sort();
    expect(statuses[0]).toBe(200);
    // The loser waited for the lock and then saw the winner's index (403), or met the lock held (409).
    expect([403, 409]).toContain(statuses[1]);
    const winner = x.status === 200 ? ann : bob;
    const loser = winner === ann ? bob : ann;
    const rows = (await search(winner, 'contested')).data!.records.map((r) => r.who);
    expect(rows).toEqual([winner.user]);
    const retry = await upload(loser, 'contested', `who\n${loser.user}\n`);
    expect(retry.status).toBe(403);
  });

  it('the split deployment streams the upload from the gateway to the ingest process', async () => {
    await stack.quarry.stop();
    stack.quarry = await startQuarry({
      topology: 'split',
      dataDir: stack.dataDir,
      env: { QUARRY_UPLOAD_MAX_MB: String(MAX_MB) },
    });
    const a = await upload(ann, 'fruit', 'id,name,price\n1,apple,1.5\n', { query: '?mode=append' });
    expect(a.status).toBe(200);
    expect(a.body).toMatchObject({ loaded: 1, recordCount: 3 });
    expect((await search(ann, 'fruit')).data!.total).toBe(3);
    const tooBig = zlib.gzipSync(Buffer.alloc(5 * 1_048_576, 0x31));
    const refused = await upload(ann, 'fruit', tooBig, { headers: { 'Content-Encoding': 'gzip' } });
    expect(refused.status).toBe(413);
    expect((await search(ann, 'fruit')).data!.total).toBe(3);
  }, 600_000);
});
