import { AppError } from '@quarry/errors';
import type { ExportFormat } from '@quarry/contract';
import { ExportFailed, type ExportJob, type ExportJobs, type ExportJobStatus } from '../ports/export-jobs.port';
import type { XlsxOptions } from '../ports/delivery-files.port';
import type { ExportRecord, ExportStore, WrittenSoFar } from '../ports/export-store.port';
import type { SearchExports } from '../ports/search-exports.port';
import type { Caller, ServiceClients } from '../ports/service-clients.port';
import { ExportStatusUseCase } from './export-status.use-case';
import type { RunCrosstabUseCase } from './run-crosstab.use-case';
import { StartExportUseCase } from './start-export.use-case';

class MemoryExportStore implements ExportStore {
  readonly records = new Map<string, ExportRecord>();
  readonly removed: string[] = [];
  readonly published: string[] = [];
  free = 1 << 30;
  sofar: WrittenSoFar = { bytes: 0, rows: 0 };
  async create(record: ExportRecord) {
    this.records.set(record.id, record);
  }
  async get(id: string) {
    return this.records.get(id);
  }
  async update(id: string, patch: Partial<ExportRecord>) {
    const next = { ...this.records.get(id)!, ...patch };
    this.records.set(id, next);
    return next;
  }
  async list() {
    return [...this.records.values()];
  }
  partialPath(id: string, run: string) {
    return `/exports/${id}.${run}.part`;
  }
  async writePartial() {}
  async discardPartial() {}
  watch() {
    return { read: async () => this.sofar };
  }
  async publish(id: string, run: string, format: ExportFormat) {
    this.published.push(`${id}.${run}.${format}`);
    return 42;
  }
  async freeBytes() {
    return this.free;
  }
  openFile(): NodeJS.ReadableStream {
    throw new Error('not here');
  }
  async remove(id: string) {
    this.removed.push(id);
  }
}

class MemoryJobs implements ExportJobs {
  readonly added: ExportJob[] = [];
  readonly turns: number[] = [];
  states = new Map<string, ExportJobStatus>();
  async add(job: ExportJob, turn: number) {
    this.added.push(job);
    this.turns.push(turn);
  }
  async status(id: string): Promise<ExportJobStatus> {
    return this.states.get(id) ?? { state: 'queued' };
  }
  work() {}
  async close() {}
}

const caller = (userId: string): Caller => ({
  userId,
  userName: userId,
  admin: false,
  indexes: ['*'],
  realms: [],
  scopes: ['query:execute'],
});

const NOW = Date.parse('2026-01-01T00:00:00Z');

function setUp(count = 10, now: () => number = () => NOW, maxPerUser = 20) {
  const store = new MemoryExportStore();
  const jobs = new MemoryJobs();
  const pending: Array<{ resolve: (rows: number) => void; reject: (err: Error) => void; signal?: AbortSignal }> = [];
  // What the query service says the search holds now, and how often it was asked.
  const index = { count, asked: 0 };
  const searches: SearchExports = {
    count: async () => {
      index.asked += 1;
      return index.count;
    },
    write: (_c, _r, _f, _p, trace) =>
      new Promise<number>((resolve, reject) => pending.push({ resolve, reject, signal: trace.signal })),
  };
  const start = new StartExportUseCase(
    store,
    jobs,
    searches,
    {} as ServiceClients,
    {} as RunCrosstabUseCase,
    { maxRows: 100, ttlMs: 60_000, perUser: 2, maxPerUser, minFreeBytes: 1000, progressMs: 5 },
    now,
  );
  return { store, jobs, pending, start, index };
}

const search = { method: 'QUERIES.EXECUTE' as const, params: { index: 'movies', query: '*' }, format: 'csv' as const };
const trace = { requestId: 't' };
const settle = () => new Promise((r) => setTimeout(r, 20));
const runOf = (n: number) => ({ run: n.toString(16), signal: new AbortController().signal });

describe('StartExportUseCase', () => {
  it("queues a user's exports at their turn: each user's first before anyone's second", async () => {
    const { jobs, start } = setUp();
    for (const who of ['a', 'a', 'a', 'b', 'a', 'b']) await start.start(caller(who), search, trace);
    expect(jobs.added.map((j, i) => `${j.caller.userId}${jobs.turns[i]}`)).toEqual([
      'a1',
      'a2',
      'a3',
      'b1',
      'a4',
      'b2',
    ]);
  });

  it('refuses one export more than QUARRY_EXPORT_MAX_PER_USER with 429 naming it; a finished one frees a place', async () => {
    const { store, jobs, start, index } = setUp(10, () => NOW, 3);
    for (let i = 0; i < 3; i++) await start.start(caller('a'), search, trace);
    const asked = index.asked;
    await expect(start.start(caller('a'), search, trace)).rejects.toMatchObject({
      code: 'RATE_LIMITED',
      retryAfterSeconds: 10,
      detail:
        'You have 3 exports queued or running, as many as QUARRY_EXPORT_MAX_PER_USER (3) allows; start another once one has finished',
    });
    // Refused before the query service is asked to count anything.
    expect(index.asked).toBe(asked);
    // Another user is not held to the first one's count.
    await start.start(caller('b'), search, trace);
    expect(jobs.added).toHaveLength(4);
    await store.update(jobs.added[0].exportId, { state: 'done' });
    await start.start(caller('a'), search, trace);
    expect(jobs.turns).toEqual([1, 2, 3, 1, 3]);
  });

  it('holds the cap when many STARTs of one user arrive at once', async () => {
    const { jobs, start } = setUp(10, () => NOW, 5);
    const all = await Promise.allSettled(Array.from({ length: 40 }, () => start.start(caller('a'), search, trace)));
    expect(all.filter((r) => r.status === 'fulfilled')).toHaveLength(5);
    expect(all.filter((r) => r.status === 'rejected').map((r) => (r as PromiseRejectedResult).reason.code)).toEqual(
      Array.from({ length: 35 }, () => 'RATE_LIMITED'),
    );
    expect(jobs.turns).toEqual([1, 2, 3, 4, 5]);
  });

  it('records the export queued and adds its job, the caller and params in it', async () => {
    const { store, jobs, start } = setUp();
    const { exportId } = await start.start(caller('a'), search, trace);
    expect(store.records.get(exportId)).toMatchObject({ state: 'queued', userId: 'a', rowsWritten: 0 });
    expect(jobs.added).toEqual([
      { exportId, caller: caller('a'), ...search, requestId: 't', checked: { at: NOW, count: 10, fields: [] } },
    ]);
  });

  it('a run that starts right after START asks the query service nothing START already asked', async () => {
    const { store, jobs, pending, start, index } = setUp();
    await start.start(caller('a'), search, trace);
    expect(index.asked).toBe(1);
    const run = start.run(jobs.added[0], runOf(1));
    await settle();
    expect(pending).toHaveLength(1);
    pending[0].resolve(10);
    expect(await run).toBe('done');
    expect(index.asked).toBe(1);
    expect(store.records.get(jobs.added[0].exportId)).toMatchObject({ state: 'done', rowsWritten: 10 });
  });

  it('a run taken up later, or a job that carries no check, counts again and fails past the row limit', async () => {
    let now = NOW;
    const { store, jobs, pending, start, index } = setUp(10, () => now);
    await start.start(caller('a'), search, trace);
    await start.start(caller('a'), search, trace);
    // The index was reloaded with more records than the limit after START.
    index.count = 101;
    now += 1001;
    await expect(start.run(jobs.added[0], runOf(1))).rejects.toBeInstanceOf(ExportFailed);
    expect(index.asked).toBe(3);
    expect(store.records.get(jobs.added[0].exportId)).toMatchObject({
      state: 'failed',
      error: expect.stringContaining('QUARRY_EXPORT_MAX_ROWS (100)') as unknown,
    });
    // A job added before jobs carried their check, run at once.
    now = NOW;
    const { checked, ...old } = jobs.added[1];
    expect(checked).toBeDefined();
    await expect(start.run(old, runOf(2))).rejects.toBeInstanceOf(ExportFailed);
    expect(index.asked).toBe(4);
    // Within the second, the check START made stands.
    index.count = 10;
    const { exportId } = await start.start(caller('a'), search, trace);
    index.count = 101;
    now += 1000;
    const run = start.run(jobs.added[2], runOf(3));
    await settle();
    pending[0].resolve(10);
    expect(await run).toBe('done');
    expect(index.asked).toBe(5);
    expect(store.records.get(exportId)).toMatchObject({ state: 'done' });
    expect(pending).toHaveLength(1);
  });

  it('runs at most two of a user’s exports at once in a process; a third waits its turn, other users do not', async () => {
    const { store, jobs, pending, start } = setUp();
    for (let i = 0; i < 3; i++) await start.start(caller('a'), search, trace);
    await start.start(caller('b'), search, trace);
    const [a1, a2, a3, b1] = jobs.added;
    const r1 = start.run(a1, runOf(1));
    const r2 = start.run(a2, runOf(2));
    await settle();
    expect(await start.run(a3, runOf(3))).toBe('wait');
    expect(store.records.get(a3.exportId)!.state).toBe('queued');
    const rb = start.run(b1, runOf(4));
    await settle();
    expect(pending).toHaveLength(3);
    expect(store.records.get(b1.exportId)!.state).toBe('running');
    pending[0].resolve(10);
    expect(await r1).toBe('done');
    expect(store.records.get(a1.exportId)).toMatchObject({
      state: 'done',
      rowsWritten: 10,
      bytes: 42,
      expiresAt: '2026-01-01T00:01:00.000Z',
    });
    expect(store.published).toEqual([`${a1.exportId}.1.csv`]);
    const r3 = start.run(a3, runOf(3));
    await settle();
    expect(pending).toHaveLength(4);
    for (const p of pending.slice(1)) p.resolve(10);
    expect(await Promise.all([r2, r3, rb])).toEqual(['done', 'done', 'done']);
  });

  it('says how far a running export got, before it ends', async () => {
    const { store, jobs, pending, start } = setUp();
    await start.start(caller('a'), search, trace);
    const run = start.run(jobs.added[0], runOf(1));
    store.sofar = { bytes: 1234, rows: 17 };
    await settle();
    expect(store.records.get(jobs.added[0].exportId)).toMatchObject({ state: 'running', rowsWritten: 17, bytes: 1234 });
    pending[0].resolve(20);
    await run;
  });

  it('a failed write removes the partial file and says why, as the export’s own failure', async () => {
    const { store, jobs, pending, start } = setUp();
    await start.start(caller('a'), search, trace);
    const run = start.run(jobs.added[0], runOf(1));
    await settle();
    pending[0].reject(new Error('boom'));
    await expect(run).rejects.toBeInstanceOf(ExportFailed);
    expect(store.records.get(jobs.added[0].exportId)).toMatchObject({
      state: 'failed',
      error: 'The export failed: boom',
    });
    expect(store.removed).toContain(jobs.added[0].exportId);
    expect(store.published).toEqual([]);
  });

  it('a volume running out of space stops the write, fails the export naming the setting, and removes the file', async () => {
    const { store, jobs, pending, start } = setUp();
    await start.start(caller('a'), search, trace);
    const run = start.run(jobs.added[0], runOf(1));
    await settle();
    store.free = 999;
    await settle();
    expect(pending[0].signal?.aborted).toBe(true);
    // As the gRPC client answers a call it cancelled: UNAVAILABLE, which alone would hand the run back.
    pending[0].reject(AppError.unavailable('The query service is unavailable; try again shortly'));
    await expect(run).rejects.toBeInstanceOf(ExportFailed);
    expect(store.records.get(jobs.added[0].exportId)!.error).toMatch(
      /^The export failed: the exports volume has 0 MB free, less than QUARRY_EXPORT_MIN_FREE_MB \(0\)/,
    );
    expect(store.published).toEqual([]);
  });

  it('a volume already short of space fails the export before anything is written, however short it would be', async () => {
    const { store, jobs, pending, start } = setUp();
    await start.start(caller('a'), search, trace);
    store.free = 999;
    await expect(start.run(jobs.added[0], runOf(1))).rejects.toBeInstanceOf(ExportFailed);
    expect(pending).toEqual([]);
    expect(store.records.get(jobs.added[0].exportId)!.error).toMatch(
      /^The export failed: the exports volume has 0 MB free, less than QUARRY_EXPORT_MIN_FREE_MB \(0\); nothing was written$/,
    );
    expect(store.published).toEqual([]);
  });

  it('a process stopping hands the run back queued (not failed) for another run', async () => {
    const { store, jobs, pending, start } = setUp();
    await start.start(caller('a'), search, trace);
    const stopping = new AbortController();
    const run = start.run(jobs.added[0], { run: 'a', signal: stopping.signal });
    await settle();
    stopping.abort(new Error('stopping'));
    expect(pending[0].signal?.aborted).toBe(true);
    pending[0].reject(new Error('cancelled'));
    await expect(run).rejects.not.toBeInstanceOf(ExportFailed);
    expect(store.records.get(jobs.added[0].exportId)).toMatchObject({ state: 'queued', rowsWritten: 0 });
  });

  it('a service that cannot be reached (this process stopping, its channel closed) hands the run back too', async () => {
    const { store, jobs, pending, start } = setUp();
    await start.start(caller('a'), search, trace);
    const run = start.run(jobs.added[0], runOf(1));
    await settle();
    pending[0].reject(AppError.unavailable('The query service cannot be called: this process is stopping'));
    await expect(run).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    await expect(run).rejects.not.toBeInstanceOf(ExportFailed);
    expect(store.records.get(jobs.added[0].exportId)).toMatchObject({ state: 'queued', rowsWritten: 0 });
    // The export's own failure is still final.
    const again = start.run(jobs.added[0], runOf(2));
    await settle();
    pending[1].reject(AppError.invalid('Unknown field "x"'));
    await expect(again).rejects.toBeInstanceOf(ExportFailed);
    expect(store.records.get(jobs.added[0].exportId)).toMatchObject({ state: 'failed' });
  });

  it('refuses, before recording anything, an export over the row limit, a search as xlsx and a saveReport', async () => {
    const { store, jobs, start } = setUp(101);
    await expect(start.start(caller('a'), search, trace)).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      detail: expect.stringContaining('QUARRY_EXPORT_MAX_ROWS (100)') as unknown,
    });
    const small = setUp();
    await expect(small.start.start(caller('a'), { ...search, format: 'xlsx' }, trace)).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
    });
    await expect(
      small.start.start(caller('a'), { ...search, params: { ...search.params, saveReport: { name: 'x' } } }, trace),
    ).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    expect(store.records.size + small.store.records.size + jobs.added.length + small.jobs.added.length).toBe(0);
  });

  it('refuses a search as pdf, naming format, before counting or recording it', async () => {
    const { store, jobs, start } = setUp();
    await expect(start.start(caller('a'), { ...search, format: 'pdf' }, trace)).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      detail: expect.stringMatching(/^format: .*pdf prints a crosstab/) as unknown,
    });
    expect(store.records.size + jobs.added.length).toBe(0);
  });

  it('a workbook’s rows, which its file cannot tell, come from the converter as it writes them', async () => {
    const { store, jobs, pending } = setUp();
    let convert: (rows: number) => void = () => undefined;
    let finish: () => void = () => undefined;
    const converter = {
      toXlsx: (_from: string, _to: string, _fields: readonly string[], _sheet: string, opts?: XlsxOptions) =>
        new Promise<void>((resolve) => {
          convert = (n) => opts?.rows?.(n);
          finish = resolve;
        }),
      toJsonArray: async () => undefined,
    };
    const services = { search: async () => ({ page: { fields: [{ name: 'title' }] } }) } as unknown as ServiceClients;
    const start = new StartExportUseCase(
      store,
      jobs,
      {
        count: async () => 10,
        write: () => new Promise<number>((resolve) => pending.push({ resolve, reject: () => {} })),
      },
      services,
      {} as RunCrosstabUseCase,
      { maxRows: 100, ttlMs: 60_000, perUser: 2, maxPerUser: 20, minFreeBytes: 1000, progressMs: 5 },
      () => NOW,
      converter,
    );
    await start.start(caller('a'), { ...search, format: 'xlsx' }, trace);
    const id = jobs.added[0].exportId;
    const run = start.run(jobs.added[0], runOf(1));
    // The workbook being written says no rows; the staged records are not in it yet.
    store.sofar = { bytes: 10, rows: undefined };
    await settle();
    pending[0].resolve(10);
    await settle();
    expect(store.records.get(id)!.rowsWritten).toBe(0);
    convert(4);
    await settle();
    expect(store.records.get(id)).toMatchObject({ state: 'running', rowsWritten: 4 });
    convert(9);
    await settle();
    expect(store.records.get(id)!.rowsWritten).toBe(9);
    finish();
    expect(await run).toBe('done');
    expect(store.records.get(id)).toMatchObject({ state: 'done', rowsWritten: 10 });
  });
});

describe('StartExportUseCase: a workbook being converted', () => {
  /** A converter that writes until its signal aborts, then rejects with the reason as the real one does. */
  function converting() {
    const seen: { signal?: AbortSignal; rowsAfterAbort: number } = { rowsAfterAbort: 0 };
    const converter = {
      toXlsx: (_from: string, _to: string, _fields: readonly string[], _sheet: string, opts?: XlsxOptions) =>
        new Promise<void>((_resolve, reject) => {
          seen.signal = opts?.signal;
          let n = 0;
          const t = setInterval(() => {
            if (opts?.signal?.aborted) {
              clearInterval(t);
              reject(opts.signal.reason as Error);
              return;
            }
            opts?.rows?.(++n);
          }, 1);
        }),
      toJsonArray: async () => undefined,
    };
    return { seen, converter };
  }

  function setUpXlsx(free = 1 << 30) {
    const { store, jobs } = setUp();
    store.free = free;
    const { seen, converter } = converting();
    const services = { search: async () => ({ page: { fields: [{ name: 'title' }] } }) } as unknown as ServiceClients;
    const start = new StartExportUseCase(
      store,
      jobs,
      { count: async () => 10, write: async () => 10 },
      services,
      {} as RunCrosstabUseCase,
      { maxRows: 100, ttlMs: 60_000, perUser: 2, maxPerUser: 20, minFreeBytes: 1000, progressMs: 5 },
      () => NOW,
      converter,
    );
    return { store, jobs, start, seen };
  }

  it('a stopping server aborts the conversion: the run ends, its partial file goes, the job goes back', async () => {
    const { store, jobs, start, seen } = setUpXlsx();
    await start.start(caller('a'), { ...search, format: 'xlsx' }, trace);
    const id = jobs.added[0].exportId;
    const stopping = new AbortController();
    const run = start.run(jobs.added[0], { run: '1', signal: stopping.signal });
    await settle();
    expect(store.records.get(id)!.state).toBe('running');
    stopping.abort(new Error('the server is stopping'));
    await expect(run).rejects.toThrow('the server is stopping');
    expect(seen.signal?.aborted).toBe(true);
    expect(store.removed).toContain(id);
    expect(store.records.get(id)).toMatchObject({ state: 'queued', rowsWritten: 0 });
  });

  it('a volume short of space fails the conversion with its reason', async () => {
    const { store, jobs, start, seen } = setUpXlsx();
    await start.start(caller('a'), { ...search, format: 'xlsx' }, trace);
    const id = jobs.added[0].exportId;
    const run = start.run(jobs.added[0], runOf(1));
    await settle();
    // Short of space once the conversion runs (before it, the run would not start: tested above).
    store.free = 10;
    await expect(run).rejects.toBeInstanceOf(ExportFailed);
    expect(seen.signal?.aborted).toBe(true);
    expect(store.removed).toContain(id);
    expect(store.records.get(id)).toMatchObject({
      state: 'failed',
      error: expect.stringMatching(/^The export failed: the exports volume has 0 MB free/) as unknown,
    });
  });
});

describe('ExportStatusUseCase', () => {
  it('fails a running record whose job the queue failed or lost, and removes its partial file', async () => {
    const { store, jobs, start } = setUp();
    const status = new ExportStatusUseCase(store, jobs, () => NOW + 120_000);
    const a = (await start.start(caller('a'), search, trace)).exportId;
    const b = (await start.start(caller('a'), search, trace)).exportId;
    await store.update(a, { state: 'running' });
    jobs.states.set(a, { state: 'failed', error: 'it died twice' });
    jobs.states.set(b, { state: 'missing', error: 'gone' });
    expect(await status.status('a', a)).toMatchObject({ state: 'failed', error: 'The export failed: it died twice' });
    expect(await status.status('a', b)).toMatchObject({ state: 'failed', error: 'The export failed: gone' });
    expect(store.removed).toEqual([a, b]);
    // Another user learns nothing.
    await expect(status.status('b', a)).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it('a status polled closely asks the queue once a second; a download and the sweep always ask', async () => {
    const { store, jobs, start } = setUp();
    let now = NOW + 120_000;
    const status = new ExportStatusUseCase(store, jobs, () => now);
    const asked: string[] = [];
    const queued = jobs.status.bind(jobs);
    jobs.status = async (id: string) => {
      asked.push(id);
      return queued(id);
    };
    const a = (await start.start(caller('a'), search, trace)).exportId;
    await store.update(a, { state: 'running' });
    for (let i = 0; i < 5; i++) expect((await status.status('a', a)).state).toBe('running');
    expect(asked).toHaveLength(1);
    // Lost meanwhile: seen on the first poll a second after the last check.
    jobs.states.set(a, { state: 'missing', error: 'gone' });
    now += 999;
    expect((await status.status('a', a)).state).toBe('running');
    now += 1;
    expect(await status.status('a', a)).toMatchObject({ state: 'failed', error: 'The export failed: gone' });
    expect(asked).toHaveLength(2);
    const b = (await start.start(caller('a'), search, trace)).exportId;
    await store.update(b, { state: 'running' });
    await status.status('a', b);
    expect((await status.file('a', b)).kind).toBe('not-ready');
    await status.sweep(60_000);
    expect(asked.filter((id) => id === b)).toHaveLength(3);
  });

  it('a record just created whose job is not seen yet stays queued', async () => {
    const { store, jobs, start } = setUp();
    const status = new ExportStatusUseCase(store, jobs, () => NOW + 1000);
    const a = (await start.start(caller('a'), search, trace)).exportId;
    jobs.states.set(a, { state: 'missing', error: 'gone' });
    expect((await status.status('a', a)).state).toBe('queued');
  });
});
