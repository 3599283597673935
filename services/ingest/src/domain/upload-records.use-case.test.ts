import type { Caller, Scope } from '@quarry/contract';
import { AppError } from '@quarry/errors';
import type { IndexEntry } from '@quarry/metadata-store';
import type { IndexLoaded, IndexLoader, IndexLoadRequest, LoadProgress } from '../ports/index-loader.port';
import type { SpooledUpload, UploadSpool } from '../ports/upload-spool.port';
import { checkWrite, UploadRecordsUseCase, type UploadRequest } from './upload-records.use-case';

const NAME_RULE = '1-64 letters, digits, ".", "_" or "-", starting with a letter or digit';

const caller = (userId: string, over: Partial<Caller> = {}): Caller => ({
  userId,
  userName: userId,
  admin: false,
  indexes: [],
  realms: [],
  scopes: ['indexes:write'] as Scope[],
  ...over,
});

const entry = (name: string, owner?: string): IndexEntry => ({
  name,
  description: '',
  fields: [{ name: 'id', type: 'string' }],
  views: [],
  recordCount: 12,
  version: 7,
  snapshot: `${name}/7.duckdb`,
  updatedAt: '2026-01-01T00:00:00.000Z',
  ...(owner !== undefined ? { owner } : {}),
});

const request = (over: Partial<UploadRequest> = {}): UploadRequest => ({
  caller: caller('alice'),
  index: 'sales',
  mode: 'replace',
  onError: 'fail',
  format: 'csv',
  gzip: false,
  ...over,
});

/** A catalog holding the entries given, counting how often it was asked. */
class FakeCatalog {
  asked = 0;
  constructor(private readonly entries: Record<string, IndexEntry> = {}) {}
  async getIndex(name: string): Promise<IndexEntry | null> {
    this.asked += 1;
    return this.entries[name] ?? null;
  }
}

/** A spool that reads the body whole into memory and records what it was asked and whether it was discarded. */
class FakeSpool implements UploadSpool {
  readonly received: Array<{ body: string; options: Parameters<UploadSpool['receive']>[1] }> = [];
  calls = 0;
  discarded = 0;
  failWith: unknown;
  async receive(
    body: AsyncIterable<Uint8Array>,
    options: Parameters<UploadSpool['receive']>[1],
  ): Promise<SpooledUpload> {
    this.calls += 1;
    const pieces: Buffer[] = [];
    for await (const piece of body) pieces.push(Buffer.from(piece));
    if (this.failWith !== undefined) throw this.failWith;
    this.received.push({ body: Buffer.concat(pieces).toString(), options });
    const bytes = Buffer.concat(pieces).length;
    return {
      file: `/data/tmp/upload-${this.received.length}.${options.format}`,
      bytes,
      discard: async () => {
        this.discarded += 1;
      },
    };
  }
}

/** A loader whose behaviour each test sets; it records every request it was given. */
class FakeLoader implements IndexLoader {
  readonly requests: IndexLoadRequest[] = [];
  constructor(private readonly run: (req: IndexLoadRequest, progress: LoadProgress) => Promise<IndexLoaded>) {}
  load(req: IndexLoadRequest, progress: LoadProgress): Promise<IndexLoaded> {
    this.requests.push(req);
    return this.run(req, progress);
  }
}

const published = (name: string): IndexLoaded => ({
  entry: { ...entry(name, 'alice'), version: 8, recordCount: 40 },
  rowsRead: 42,
  rejected: 2,
  rejects: [
    { line: 3, column: 'price', reason: 'not a number: "abc"' },
    { line: 9, reason: 'too many fields; load with --on-error skip to keep going' },
  ],
  replaced: 0,
});

/** A body that counts how many pieces were pulled from it: a refused upload must pull none. */
function countingBody(pieces: string[]) {
  const seen = { pulled: 0 };
  async function* gen(): AsyncGenerator<Uint8Array> {
    for (const p of pieces) {
      seen.pulled += 1;
      yield Buffer.from(p);
    }
  }
  return { body: gen(), seen };
}

function setUp(
  run: (req: IndexLoadRequest, progress: LoadProgress) => Promise<IndexLoaded> = async (req) => published(req.index),
  entries: Record<string, IndexEntry> = {},
) {
  const catalog = new FakeCatalog(entries);
  const loader = new FakeLoader(run);
  const spool = new FakeSpool();
  // A clock that moves 250 ms per reading, so durationMs is the use case's own subtraction, not a constant.
  let t = 1_000_000;
  const now = () => (t += 250);
  const uploads = new UploadRecordsUseCase(catalog, loader, spool, { maxBytes: 5_000_000 }, now);
  return { catalog, loader, spool, uploads };
}

const signal = () => new AbortController().signal;

/** What `fn` threw, checked to be an AppError, so its code and exact detail can be asserted. */
function thrownBy(fn: () => void): AppError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(AppError);
    return err as AppError;
  }
  throw new Error('expected a refusal, got none');
}

describe('UploadRecordsUseCase.admit', () => {
  const refusals: Array<[string, Partial<UploadRequest>, AppError['code'], string]> = [
    [
      'a token without indexes:write',
      { caller: caller('alice', { scopes: ['query:execute', 'indexes:read'] }) },
      'FORBIDDEN',
      'Writing an index needs a token with the indexes:write scope',
    ],
    ['a name with a path in it', { index: '../x' }, 'INVALID_ARGUMENT', `"../x" is not an index name: ${NAME_RULE}`],
    ['an empty name', { index: '' }, 'INVALID_ARGUMENT', `"" is not an index name: ${NAME_RULE}`],
    [
      'a name of 65 characters',
      { index: 'a'.repeat(65) },
      'INVALID_ARGUMENT',
      `"${'a'.repeat(65)}" is not an index name: ${NAME_RULE}`,
    ],
    [
      'a mode it does not know',
      { mode: 'merge' as UploadRequest['mode'] },
      'INVALID_ARGUMENT',
      'mode must be one of replace, append, upsert',
    ],
    [
      'upsert without a key',
      { mode: 'upsert' },
      'INVALID_ARGUMENT',
      'mode=upsert needs key: the field that names a record',
    ],
    ['a key without upsert', { mode: 'append', key: 'id' }, 'INVALID_ARGUMENT', 'key goes with mode=upsert'],
    [
      'maxErrors on a strict load',
      { maxErrors: 3 },
      'INVALID_ARGUMENT',
      'maxErrors goes with onError=skip (a strict load allows none)',
    ],
  ];

  it.each(refusals)('refuses %s with its own message', async (_what, over, code, detail) => {
    const { uploads, catalog } = setUp();
    const err = await uploads.admit(request(over)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect(err).toMatchObject({ code, detail });
    // Arguments are checked before the catalog is read: a malformed request costs no store round trip.
    expect(catalog.asked).toBe(0);
  });

  it('quotes a 1 MB name cut short, with its length, not whole', async () => {
    const { uploads } = setUp();
    const huge = 'n'.repeat(1_048_576);
    const err = await uploads.admit(request({ index: huge })).catch((e: unknown) => e);
    expect(err).toMatchObject({
      code: 'INVALID_ARGUMENT',
      detail: `"${'n'.repeat(100)}…" (1048576 characters) is not an index name: ${NAME_RULE}`,
    });
    // The message travels in a gRPC trailer and an HTTP body: it must stay small whatever was sent.
    expect((err as AppError).detail.length).toBeLessThan(300);
  });

  it('admits the modes it knows with their companions', async () => {
    const { uploads, catalog } = setUp();
    await expect(uploads.admit(request())).resolves.toBeUndefined();
    await expect(uploads.admit(request({ mode: 'append' }))).resolves.toBeUndefined();
    await expect(uploads.admit(request({ mode: 'upsert', key: 'id' }))).resolves.toBeUndefined();
    await expect(uploads.admit(request({ onError: 'skip', maxErrors: 0 }))).resolves.toBeUndefined();
    expect(catalog.asked).toBe(4);
  });

  it("refuses a name someone else owns, through the catalog's entry", async () => {
    const { uploads } = setUp(undefined, { sales: entry('sales', 'bob') });
    await expect(uploads.admit(request({ caller: caller('alice', { indexes: ['sales'] }) }))).rejects.toMatchObject({
      code: 'FORBIDDEN',
      detail: 'Index "sales" may be written only by its owner or an admin',
    });
  });
});

describe('checkWrite', () => {
  it('lets the owner write', () => {
    expect(() => checkWrite(caller('alice'), 'x', entry('x', 'alice'))).not.toThrow();
  });

  it('lets an admin write an index someone else owns, and one loaded by the CLI (no owner)', () => {
    const admin = caller('root', { admin: true });
    expect(() => checkWrite(admin, 'x', entry('x', 'bob'))).not.toThrow();
    expect(() => checkWrite(admin, 'x', entry('x'))).not.toThrow();
  });

  it('tells a reader who is not the owner whose rule refuses them', () => {
    for (const indexes of [['x'], ['*']]) {
      const err = thrownBy(() => checkWrite(caller('alice', { indexes }), 'x', entry('x', 'bob')));
      expect(err).toMatchObject({
        code: 'FORBIDDEN',
        detail: 'Index "x" may be written only by its owner or an admin',
      });
    }
  });

  it('tells someone who cannot read the index only that the name is taken', () => {
    const stranger = caller('alice', { indexes: ['other'] });
    expect(thrownBy(() => checkWrite(stranger, 'x', entry('x', 'bob')))).toMatchObject({
      code: 'FORBIDDEN',
      detail: 'The index name "x" is taken; choose another',
    });
    // An index the CLI loaded has no owner: a non-admin may not take it over either.
    expect(thrownBy(() => checkWrite(stranger, 'x', entry('x')))).toMatchObject({
      code: 'FORBIDDEN',
      detail: 'The index name "x" is taken; choose another',
    });
  });

  it('lets anyone with the scope create a free name', () => {
    expect(() => checkWrite(caller('alice'), 'fresh', null)).not.toThrow();
  });
});

describe('UploadRecordsUseCase.upload', () => {
  it('spools the body, loads the file with the request, answers the accounting and discards the spool', async () => {
    const { uploads, loader, spool } = setUp();
    const { body } = countingBody(['id,price\n', '1,2\n']);
    const abort = new AbortController();
    const req = request({ mode: 'upsert', key: 'id', onError: 'skip', maxErrors: 5, format: 'jsonl', gzip: true });
    const outcome = await uploads.upload(req, body, abort.signal);

    expect(spool.received).toEqual([
      { body: 'id,price\n1,2\n', options: { format: 'jsonl', gzip: true, maxBytes: 5_000_000, signal: abort.signal } },
    ]);
    expect(loader.requests).toHaveLength(1);
    expect(loader.requests[0]).toMatchObject({
      index: 'sales',
      file: '/data/tmp/upload-1.jsonl',
      format: 'jsonl',
      label: 'the upload',
      mode: 'upsert',
      key: 'id',
      onError: 'skip',
      maxErrors: 5,
      owner: 'alice',
    });
    expect(outcome).toEqual({
      index: 'sales',
      version: 8,
      rowsRead: 42,
      loaded: 40,
      rejected: 2,
      rejects: [
        { line: 3, column: 'price', reason: 'not a number: "abc"' },
        // The reasons a row was rejected are said in the upload's own terms too.
        { line: 9, reason: 'too many fields; load with onError=skip to keep going' },
      ],
      // The clock was read at the start and at the answer: two ticks of 250 ms apart, admit in between.
      durationMs: 250,
      replaced: 0,
      recordCount: 40,
    });
    expect(spool.discarded).toBe(1);
  });

  it('passes no key and no maxErrors to the loader when the request has none', async () => {
    const { uploads, loader } = setUp();
    await uploads.upload(request(), countingBody(['a\n']).body, signal());
    expect(loader.requests[0]).not.toHaveProperty('key');
    expect(loader.requests[0]).not.toHaveProperty('maxErrors');
  });

  it('answers a failed load with its failure in upload terms and what the loader had counted', async () => {
    const { uploads, spool } = setUp(async (_req, progress) => {
      // The loader's accounting when it stopped: it writes into `progress` as it goes.
      progress.rowsRead = 120;
      progress.rejected = 4;
      progress.rejects = [
        { line: 5, column: 'qty', reason: 'not a whole number: "x"' },
        { record: 9, reason: 'missing field "id" (--on-error skip keeps the rest)' },
      ];
      throw AppError.invalid(
        'More than 3 rows rejected (--max-errors 3); the first: line 5. Nothing was published; load with --on-error skip and a larger --max-errors',
      );
    });
    const outcome = await uploads.upload(
      request({ onError: 'skip', maxErrors: 3 }),
      countingBody(['x\n']).body,
      signal(),
    );
    expect(outcome).toEqual({
      index: 'sales',
      rowsRead: 120,
      loaded: 0,
      rejected: 4,
      rejects: [
        { line: 5, column: 'qty', reason: 'not a whole number: "x"' },
        { record: 9, reason: 'missing field "id" (onError=skip keeps the rest)' },
      ],
      durationMs: 250,
      replaced: 0,
      failure: {
        code: 'INVALID_ARGUMENT',
        detail:
          'More than 3 rows rejected (maxErrors=3); the first: line 5. Nothing was published; load with onError=skip and a larger maxErrors',
      },
    });
    // Nothing was published: no version in the answer.
    expect(outcome).not.toHaveProperty('version');
    expect(spool.discarded).toBe(1);
  });

  it('leaves rowsRead out when the load stopped before it knew it', async () => {
    const { uploads } = setUp(async () => {
      throw AppError.invalid('line 2: unterminated quote; fix the file, or load with --on-error skip');
    });
    const outcome = await uploads.upload(request(), countingBody(['x\n']).body, signal());
    expect(outcome).not.toHaveProperty('rowsRead');
    expect(outcome.failure).toEqual({
      code: 'INVALID_ARGUMENT',
      detail: 'line 2: unterminated quote; fix the file, or load with onError=skip',
    });
  });

  it('answers a held load lock without naming the process that holds it', async () => {
    const { uploads, spool } = setUp(async () => {
      throw AppError.busy(
        'Index "sales" is being loaded or dropped by another process (pid 4242 on build-host-7, since 2026-01-01T00:00:00.000Z); try again when it has finished',
        1,
      );
    });
    const outcome = await uploads.upload(request(), countingBody(['x\n']).body, signal());
    expect(outcome.failure).toEqual({
      code: 'CONFLICT',
      detail: 'Index "sales" is being loaded by another upload or process; try again when it has finished',
    });
    expect(JSON.stringify(outcome)).not.toMatch(/4242|build-host-7/);
    expect(spool.discarded).toBe(1);
  });

  it('answers a lasting conflict (not a lock held for now) with its own words', async () => {
    const { uploads } = setUp(async () => {
      throw AppError.conflict('The indexes in /data were loaded into the typesense search backend');
    });
    const outcome = await uploads.upload(request(), countingBody(['x\n']).body, signal());
    expect(outcome.failure).toEqual({
      code: 'CONFLICT',
      detail: 'The indexes in /data were loaded into the typesense search backend',
    });
  });

  it('rejects (does not answer) when the name was taken by someone else meanwhile, under the lock', async () => {
    // admit saw a free name; by the time the loader holds the lock, bob has created it.
    const { uploads, spool, catalog } = setUp(async (req) => {
      req.authorize(entry('sales', 'bob'));
      return published(req.index);
    });
    const err = await uploads
      .upload(request({ caller: caller('alice', { indexes: ['*'] }) }), countingBody(['x\n']).body, signal())
      .catch((e: unknown) => e);
    expect(catalog.asked).toBe(1);
    expect(err).toBeInstanceOf(AppError);
    expect(err).toMatchObject({
      code: 'FORBIDDEN',
      detail: 'Index "sales" may be written only by its owner or an admin',
    });
    expect(spool.discarded).toBe(1);
  });

  it('lets the loader publish when the name is still free, or the caller’s own, under the lock', async () => {
    const seen: string[] = [];
    const { uploads } = setUp(async (req) => {
      req.authorize(null);
      req.authorize(entry('sales', 'alice'));
      seen.push('authorized');
      return published(req.index);
    });
    await uploads.upload(request(), countingBody(['x\n']).body, signal());
    expect(seen).toEqual(['authorized']);
  });

  it('rejects with a fault of its own (not an AppError) as it came, and still discards the spool', async () => {
    const fault = new Error('EIO: disk went away');
    const { uploads, spool } = setUp(async () => {
      throw fault;
    });
    await expect(uploads.upload(request(), countingBody(['x\n']).body, signal())).rejects.toBe(fault);
    expect(spool.discarded).toBe(1);
  });

  it('rejects with an INTERNAL AppError rather than answering it as an accounting', async () => {
    const internal = AppError.internal('The snapshot could not be written');
    const { uploads, spool } = setUp(async () => {
      throw internal;
    });
    await expect(uploads.upload(request(), countingBody(['x\n']).body, signal())).rejects.toBe(internal);
    expect(spool.discarded).toBe(1);
  });

  it('rejects when the spool refuses the body, and never loads', async () => {
    const { uploads, spool, loader } = setUp();
    spool.failWith = new AppError('PAYLOAD_TOO_LARGE', 'The upload exceeds QUARRY_UPLOAD_MAX_MB (4 MB)');
    await expect(uploads.upload(request(), countingBody(['x\n']).body, signal())).rejects.toMatchObject({
      code: 'PAYLOAD_TOO_LARGE',
    });
    expect(loader.requests).toHaveLength(0);
  });

  it.each<[string, Partial<UploadRequest>, Record<string, IndexEntry>]>([
    ['a missing scope', { caller: caller('alice', { scopes: ['indexes:read'] }) }, {}],
    ['a bad name', { index: '../x' }, {}],
    ['upsert without key', { mode: 'upsert' }, {}],
    ['a name held by someone else', { caller: caller('alice', { indexes: [] }) }, { sales: entry('sales', 'bob') }],
  ])('reads no byte of the body and never spools or loads when admit refuses (%s)', async (_what, over, entries) => {
    const { uploads, spool, loader } = setUp(undefined, entries);
    const { body, seen } = countingBody(['a\n', 'b\n']);
    await expect(uploads.upload(request(over), body, signal())).rejects.toBeInstanceOf(AppError);
    expect(seen.pulled).toBe(0);
    expect(spool.calls).toBe(0);
    expect(spool.discarded).toBe(0);
    expect(loader.requests).toHaveLength(0);
  });
});
