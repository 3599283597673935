import { rpcClient } from './support/http';
import { useStackWithAnalyst, unwrap } from './support/stack';

/*
 * Idempotency-Key through JSON-RPC on the real server (docs/api.md): a retried EXPORTS.START or a search
 * that saves a report gives the first call's answer again and creates nothing more, also when the retries
 * race the first; the same key with another body is a 409, a malformed key a 400, and a call that creates
 * nothing ignores the header. Keys are the token's own.
 */

describe('Idempotency-Key', () => {
  const env = useStackWithAnalyst();
  const call = (key: string | undefined, method: string, params: unknown, token = env.analyst().token) =>
    rpcClient(env.stack().quarry.baseUrl, token).call(
      method,
      params,
      key === undefined ? {} : { headers: { 'Idempotency-Key': key } },
    );
  const data = async <T>(key: string | undefined, method: string, params: unknown): Promise<T> => {
    const res = unwrap<T>(await call(key, method, params));
    if (res.error) throw new Error(`${method}: ${res.error.code} ${res.error.data.detail}`);
    return res.data as T;
  };
  const exportParams = { method: 'QUERIES.EXECUTE', params: { index: 'movies', query: 'Title:star' }, format: 'csv' };

  it('gives a retried EXPORTS.START the first export, even when the retries race it', async () => {
    const first = await data<{ exportId: string }>('export-1', 'EXPORTS.START', exportParams);
    // Keys compare the request's meaning: the same params in another order are the same request.
    const again = await data<{ exportId: string }>('export-1', 'EXPORTS.START', {
      format: 'csv',
      params: { query: 'Title:star', index: 'movies' },
      method: 'QUERIES.EXECUTE',
    });
    expect(again.exportId).toBe(first.exportId);
    const racing = await Promise.all(
      Array.from({ length: 6 }, () => data<{ exportId: string }>('export-race', 'EXPORTS.START', exportParams)),
    );
    expect(new Set(racing.map((r) => r.exportId)).size).toBe(1);
    expect(racing[0]!.exportId).not.toBe(first.exportId);
    // Without a key every call is its own.
    const a = await data<{ exportId: string }>(undefined, 'EXPORTS.START', exportParams);
    const b = await data<{ exportId: string }>(undefined, 'EXPORTS.START', exportParams);
    expect(a.exportId).not.toBe(b.exportId);
  });

  it('saves one report for a retried search with saveReport, and answers it the same', async () => {
    const params = { index: 'movies', query: 'Title:alien', pageSize: 3, saveReport: { name: 'Aliens, once' } };
    const first = await data<{ report: { guid: string }; total: number }>('save-1', 'QUERIES.EXECUTE', params);
    const again = await data<{ report: { guid: string }; total: number }>('save-1', 'QUERIES.EXECUTE', params);
    expect([again.report.guid, again.total]).toEqual([first.report.guid, first.total]);
    const found = await data<{ reports: Array<{ name: string }> }>(undefined, 'REPORTS.FIND', { search: 'Aliens' });
    expect(found.reports.filter((r) => r.name === 'Aliens, once')).toHaveLength(1);
  });

  it('refuses the same key with another body (409), a malformed key (400), and ignores it where nothing is created', async () => {
    await data('reused', 'EXPORTS.START', exportParams);
    const other = unwrap(await call('reused', 'EXPORTS.START', { ...exportParams, format: 'jsonl' }));
    expect(other.error).toMatchObject({
      code: 409,
      data: {
        detail: expect.stringMatching(/^Idempotency-Key "reused" was used in the last 24 h with another request/),
      },
    });
    const bad = unwrap(await call('has spaces', 'EXPORTS.START', exportParams));
    expect(bad.error).toMatchObject({
      code: 400,
      data: { detail: expect.stringMatching(/^Idempotency-Key must be 1 to 255 visible ASCII/) },
    });
    // A search that saves nothing reads: the key does not pin its answer.
    expect(unwrap(await call('reused', 'QUERIES.EXECUTE', { index: 'movies', pageSize: 1 })).error).toBeUndefined();
  });
});
