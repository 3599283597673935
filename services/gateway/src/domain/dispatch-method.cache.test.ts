import type { CacheStatus } from '@quarry/contract';
import { AppError } from '@quarry/errors';
import {
  RawJson,
  type PivotRequest,
  type ReportToSave,
  type SearchRequest,
  type ServiceClients,
} from '../ports/service-clients.port';
import { DispatchMethodUseCase } from './dispatch-method.use-case';
import { createMethodHandlers } from './handlers/method-handlers';
import { principalWith } from '../../test-support/principal';

const principal = principalWith(['query:execute', 'reports:write']);

/** Services that answer with the given cache word and remember what they were sent. */
function fakeServices(cache: string) {
  const sent: { query?: SearchRequest; crosstab?: PivotRequest; saved?: ReportToSave } = {};
  const word = cache as CacheStatus;
  const known = ['hit', 'miss', 'bypass'].includes(cache) ? word : undefined;
  const services: Partial<ServiceClients> = {
    search: async (_caller, req) => {
      sent.query = req;
      return {
        page: {
          index: 'movies',
          query: '*',
          page: 1,
          pageSize: 50,
          total: 0,
          totalPages: 0,
          fields: [],
          records: new RawJson('[]'),
        },
        cache: known,
        indexVersion: 1,
        snapshot: '',
        engine: 'test',
      };
    },
    pivot: async (_caller, req) => {
      sent.crosstab = req;
      return {
        table: {
          contentType: 'text/html',
          body: '<table></table>',
          rowCount: 0,
          columnCount: 0,
          rowsOmitted: 0,
          columnsOmitted: 0,
          rowsFilteredOut: 0,
          columnsFilteredOut: 0,
        },
        cache: known,
        indexVersion: 1,
        snapshot: '',
        engine: 'test',
      };
    },
    renderChart: async (_caller, req) => ({
      contentType: 'image/png',
      data: 'iVBOR',
      width: req.width,
      height: req.height,
      chartType: 'Pie2D',
    }),
    printTable: async () => Buffer.from('%PDF-1.4\n%%EOF\n').toString('base64'),
    saveReport: async (_caller, report) => {
      sent.saved = report;
      return { guid: 'g1' };
    },
  };
  return { use: new DispatchMethodUseCase(createMethodHandlers({ services: services as ServiceClients })), sent };
}

const crosstab = { index: 'movies', rows: ['Genre'], totals: [{ aggregationType: 'Count' }] };

describe('the cache param and meta.cache in the gateway', () => {
  it.each(['hit', 'miss', 'bypass'])(
    'passes the service word %p on for a query, a crosstab and a chart',
    async (word) => {
      const f = fakeServices(word);
      expect((await f.use.call(principal, 'QUERIES.EXECUTE', { index: 'movies' }, { requestId: 'r' })).cache).toBe(
        word,
      );
      expect((await f.use.call(principal, 'CROSSTAB.EXECUTE', crosstab, { requestId: 'r' })).cache).toBe(word);
      expect(
        (await f.use.call(principal, 'CROSSTAB.EXECUTE', { ...crosstab, chartType: 'Pie2D' }, { requestId: 'r' }))
          .cache,
      ).toBe(word);
    },
  );

  it('says nothing rather than something wrong when a service sends no known word', async () => {
    for (const word of ['', 'HIT', 'stale']) {
      const f = fakeServices(word);
      expect(
        (await f.use.call(principal, 'QUERIES.EXECUTE', { index: 'movies' }, { requestId: 'r' })).cache,
      ).toBeUndefined();
    }
  });

  it('asks the services to bypass the cache only for cache: false', async () => {
    const f = fakeServices('miss');
    for (const [params, bypass] of [
      [{}, false],
      [{ cache: true }, false],
      [{ cache: false }, true],
    ] as const) {
      await f.use.call(principal, 'QUERIES.EXECUTE', { index: 'movies', ...params }, { requestId: 'r' });
      await f.use.call(principal, 'CROSSTAB.EXECUTE', { ...crosstab, ...params }, { requestId: 'r' });
      expect([f.sent.query?.bypassCache, f.sent.crosstab?.bypassCache]).toEqual([bypass, bypass]);
    }
  });

  it.each(['false', 0, null, 'no'])('refuses cache: %p with a 400 before any service call', async (value) => {
    const f = fakeServices('miss');
    const err = await f.use
      .call(principal, 'QUERIES.EXECUTE', { index: 'movies', cache: value }, { requestId: 'r' })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).message).toBe('cache must be a boolean');
    expect(f.sent.query).toBeUndefined();
  });

  it('does not save cache: false into a report', async () => {
    const f = fakeServices('bypass');
    await f.use.call(
      principal,
      'QUERIES.EXECUTE',
      { index: 'movies', cache: false, saveReport: { name: 'q' } },
      { requestId: 'r' },
    );
    expect(Object.keys(JSON.parse(JSON.stringify(f.sent.saved?.params ?? {})))).not.toContain('cache');
    await f.use.call(
      principal,
      'CROSSTAB.EXECUTE',
      { ...crosstab, cache: false, saveReport: { name: 'c' } },
      { requestId: 'r' },
    );
    expect(JSON.parse(JSON.stringify(f.sent.saved?.params ?? {}))).toMatchObject({ index: 'movies', rows: ['Genre'] });
    expect(Object.keys(JSON.parse(JSON.stringify(f.sent.saved?.params ?? {})))).not.toContain('cache');
  });
});
