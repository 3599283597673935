import { createParams, inFlagTerms, outcome, SourceCommandError } from './source.commands';

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
