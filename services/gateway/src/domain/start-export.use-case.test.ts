import type { ExportFormat } from '@quarry/contract';
import type { ExportRecord, ExportStore } from '../ports/export-store.port';
import type { SearchExports } from '../ports/search-exports.port';
import type { Caller, ServiceClients } from '../ports/service-clients.port';
import type { RunCrosstabUseCase } from './run-crosstab.use-case';
import { StartExportUseCase } from './start-export.use-case';

class MemoryExportStore implements ExportStore {
  readonly records = new Map<string, ExportRecord>();
  readonly removed: string[] = [];
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
  filePath(id: string, format: ExportFormat) {
    return `/exports/${id}.${format}`;
  }
  async fileSize() {
    return 42;
  }
  async writeFile() {}
  async seal() {}
  openFile(): NodeJS.ReadableStream {
    throw new Error('not here');
  }
  async remove(id: string) {
    this.removed.push(id);
  }
}

const caller = (userId: string): Caller => ({
  userId,
  userName: userId,
  admin: false,
  indexes: ['*'],
  realms: [],
  scopes: ['query:execute'],
});

function setUp(count = 10) {
  const store = new MemoryExportStore();
  const pending: Array<{ resolve: (rows: number) => void; reject: (err: Error) => void }> = [];
  const searches: SearchExports = {
    count: async () => count,
    write: () => new Promise<number>((resolve, reject) => pending.push({ resolve, reject })),
  };
  const start = new StartExportUseCase(
    store,
    searches,
    {} as ServiceClients,
    {} as RunCrosstabUseCase,
    { maxRows: 100, ttlMs: 60_000, perUser: 2 },
    'host-a',
    () => Date.parse('2026-01-01T00:00:00Z'),
  );
  return { store, pending, start };
}

const search = { method: 'QUERIES.EXECUTE' as const, params: { index: 'movies', query: '*' }, format: 'csv' as const };
const trace = { requestId: 't' };
const settle = () => new Promise((r) => setImmediate(r));

describe('StartExportUseCase', () => {
  it('runs at most two of a user’s exports at once; the others wait queued, and other users are not held up', async () => {
    const { store, pending, start } = setUp();
    const a = [];
    for (let i = 0; i < 3; i++) a.push((await start.start(caller('a'), search, trace)).exportId);
    const b = (await start.start(caller('b'), search, trace)).exportId;
    await settle();
    const state = (id: string) => store.records.get(id)!.state;
    expect(a.map(state)).toEqual(['running', 'running', 'queued']);
    expect(state(b)).toBe('running');
    expect(pending).toHaveLength(3);
    pending[0].resolve(10);
    await settle();
    await settle();
    expect(a.map(state)).toEqual(['done', 'running', 'running']);
    expect(store.records.get(a[0])).toMatchObject({
      rowsWritten: 10,
      bytes: 42,
      expiresAt: '2026-01-01T00:01:00.000Z',
    });
    for (const p of pending.slice(1)) p.resolve(10);
    await settle();
    await settle();
    pending.at(-1)!.resolve(10);
    await start.drain();
    expect([...a, b].map(state)).toEqual(['done', 'done', 'done', 'done']);
  });

  it('a failed write removes the partial file and says why', async () => {
    const { store, pending, start } = setUp();
    const { exportId } = await start.start(caller('a'), search, trace);
    await settle();
    pending[0].reject(new Error('boom'));
    await start.drain();
    expect(store.records.get(exportId)).toMatchObject({ state: 'failed', error: 'The export failed: boom' });
    expect(store.removed).toEqual([exportId]);
  });

  it('refuses, before recording anything, an export over the row limit, a search as xlsx and a saveReport', async () => {
    const { store, start } = setUp(101);
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
    expect(store.records.size + small.store.records.size).toBe(0);
  });
});
