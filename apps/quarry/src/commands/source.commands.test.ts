import type { SourceSummary } from '@quarry/client';
import {
  createParams,
  inFlagTerms,
  outcome,
  SourceCommandError,
  updateParams,
  updateSource,
  type SourceApi,
} from './source.commands';

describe('inFlagTerms', () => {
  it('names each problem of a refusal by the flag that sets it', () => {
    expect(inFlagTerms('refresh.key is required with mode "upsert"')).toBe('--key is required with --mode upsert');
    expect(
      inFlagTerms(
        'connection.database is required (or give connection.url); connection.user is required (or give connection.url)',
      ),
    ).toBe('--database is required (or give --url); --user is required (or give --url)');
    expect(inFlagTerms('load.maxErrors goes with onError "skip" (a strict load allows none)')).toBe(
      '--max-errors goes with --on-error skip (a strict load allows none)',
    );
    expect(inFlagTerms('load.types.id must be one of "string", "integer"')).toBe(
      '--type id=… must be one of "string", "integer"',
    );
    expect(inFlagTerms('connection: db.example.com:5432 does not match QUARRY_SOURCE_ALLOW', '--host')).toBe(
      '--host: db.example.com:5432 does not match QUARRY_SOURCE_ALLOW',
    );
    expect(inFlagTerms('query: a sqlite source reads a query or a table (one of them)')).toBe(
      '--query: a sqlite source reads a query or a table (one of them)',
    );
    // A word that is only a parameter's name inside a sentence stays as it is; so does a detail naming none.
    expect(inFlagTerms('You already have a source named "index"')).toBe('You already have a source named "index"');
    expect(inFlagTerms('indexes are kept')).toBe('indexes are kept');
  });
});

describe('createParams', () => {
  const base = { index: 'orders', kind: 'postgres', host: 'db', database: 'shop', user: 'q', table: 'orders' };

  it('builds SOURCES.CREATE from the flags: a cursor alone means append, a key alone upsert', () => {
    expect(createParams('o', { ...base, port: '5433', cursor: 'id', cron: '0 * * * *' }, 'pw')).toEqual({
      name: 'o',
      index: 'orders',
      kind: 'postgres',
      connection: { host: 'db', port: 5433, database: 'shop', user: 'q', password: 'pw' },
      table: 'orders',
      refresh: { mode: 'append', cursor: 'id', cron: '0 * * * *' },
    });
    expect(createParams('o', { ...base, key: 'sku' }).refresh).toEqual({ mode: 'upsert', key: 'sku' });
    expect(createParams('o', base).refresh).toBeUndefined();
    expect(
      createParams('o', { ...base, type: ['amount=number'], view: ['Who=customer'], onError: 'skip', maxErrors: '5' })
        .load,
    ).toEqual({
      types: { amount: 'number' },
      views: [{ name: 'Who', field: 'customer' }],
      onError: 'skip',
      maxErrors: 5,
    });
  });

  it('refuses a password on the command line, a password beside --url, and malformed flags', () => {
    const refusal = (f: () => unknown) => {
      try {
        f();
      } catch (err) {
        expect(err).toBeInstanceOf(SourceCommandError);
        return (err as Error).message;
      }
      throw new Error('accepted');
    };
    expect(refusal(() => createParams('o', { ...base, password: 'pw' }))).toMatch(/never taken on the command line/);
    expect(refusal(() => createParams('o', { ...base, url: 'postgres://db/x' }, 'pw'))).toMatch(
      /^--password-stdin goes with --host/,
    );
    expect(refusal(() => createParams('o', { ...base, port: 'five' }))).toBe('--port must be a whole number');
    expect(refusal(() => createParams('o', { ...base, type: ['amount'] }))).toBe(
      '--type takes field=type (amount=number), not "amount"',
    );
  });
});

describe('outcome', () => {
  const run = { runId: 'r', state: 'done', trigger: 'manual', mode: 'append', queuedAt: '' } as const;
  it('says the version published, or that there was nothing new', () => {
    expect(outcome({ ...run, rowsRead: 3, loaded: 2, rejected: 1, version: 4 })).toBe(
      'done: 3 rows read, 2 loaded, 1 rejected; published version 4',
    );
    expect(outcome({ ...run, rowsRead: 0, loaded: 0, rejected: 0 })).toBe(
      'done: 0 rows read, 0 loaded, 0 rejected; nothing new, no version published',
    );
  });
});

describe('source update', () => {
  const current: SourceSummary = {
    sourceId: 'a'.repeat(32),
    name: 'orders',
    index: 'orders',
    kind: 'postgres',
    owner: 'ann',
    connection: { host: 'db', port: 5433, database: 'shop', user: 'q', hasPassword: true },
    table: 'orders',
    refresh: { cron: '0 * * * *', timeZone: 'Europe/Paris', mode: 'append', cursor: 'id' },
    load: { onError: 'skip', maxErrors: 5, types: { amount: 'number' } },
    createdAt: '2026-01-01T00:00:00.000Z',
    updatedAt: '2026-01-01T00:00:00.000Z',
  };

  it('changes what the flags name and keeps the rest of the part they change', () => {
    expect(updateParams(current, { cron: '*/15 * * * *' })).toEqual({
      sourceId: current.sourceId,
      refresh: { mode: 'append', cursor: 'id', cron: '*/15 * * * *', timeZone: 'Europe/Paris' },
    });
    expect(updateParams(current, { onDemand: true }).refresh).toEqual({
      mode: 'append',
      cursor: 'id',
      timeZone: 'Europe/Paris',
    });
    // A key alone moves to upsert, and the append cursor does not follow it.
    expect(updateParams(current, { key: 'sku' }).refresh).toEqual({
      mode: 'upsert',
      key: 'sku',
      cron: '0 * * * *',
      timeZone: 'Europe/Paris',
    });
    expect(updateParams(current, { type: ['day=date'] }).load).toEqual({
      types: { amount: 'number', day: 'date' },
      onError: 'skip',
      maxErrors: 5,
    });
    expect(updateParams(current, { name: 'orders 2', table: 'orders_v2' })).toEqual({
      sourceId: current.sourceId,
      name: 'orders 2',
      table: 'orders_v2',
    });
  });

  it('a new password alone keeps the connection, with it; connection flags give it anew', () => {
    expect(updateParams(current, {}, 'new-pw').connection).toEqual({
      host: 'db',
      port: 5433,
      database: 'shop',
      user: 'q',
      password: 'new-pw',
    });
    expect(updateParams(current, { url: 'postgres://u:p@db2/shop' }).connection).toEqual({
      url: 'postgres://u:p@db2/shop',
    });
    expect(() => updateParams(current, { password: 'pw' })).toThrow(/never taken on the command line/);
    expect(() => updateParams(current, { onDemand: true, cron: '0 * * * *' })).toThrow(/not both/);
  });

  it('calls SOURCES.UPDATE on the source its name finds, and refuses an update that changes nothing', async () => {
    const calls: Array<[string, unknown]> = [];
    const api: SourceApi = {
      call: (async (method: string, params: unknown) => {
        calls.push([method, params]);
        if (method === 'SOURCES.FIND') return { sources: [current] };
        if (method === 'SOURCES.UPDATE') return { ...current, name: 'renamed' };
        throw new Error(method);
      }) as SourceApi['call'],
    };
    expect(await updateSource(api, 'orders', { name: 'renamed' })).toBe(
      `updated source ${current.sourceId} "renamed": postgres from q@db:5433/shop (password kept) into orders; append by id, cron 0 * * * * (Europe/Paris)`,
    );
    expect(calls.at(-1)).toEqual(['SOURCES.UPDATE', { sourceId: current.sourceId, name: 'renamed' }]);
    const err = await updateSource(api, 'orders', {}).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SourceCommandError);
    expect((err as SourceCommandError).exitCode).toBe(2);
  });
});
