import { EventEmitter } from 'node:events';
import { completeCrosstabExecute, pivotParamsCodec, SHOW_AS, type CompletePivot } from '@quarry/contract';
import { silentLogger } from '@quarry/logger';
import { grpc, type pb } from '@quarry/rpc';
import type { HeavyCallLimiter } from '@quarry/runtime';
import type { RunCrosstabOptions, RunCrosstabUseCase } from '../domain/run-crosstab.use-case';
import { crosstabHandlers } from './grpc-crosstab.handlers';

interface Ran {
  params: CompletePivot;
  output: string;
  opts: RunCrosstabOptions;
}

/** The handler over a use case that records what it was asked and answers the payload given. */
function handler(payload: string | Uint8Array = '<table></table>', contentType = 'text/html') {
  const ran: Ran[] = [];
  const run = {
    run: async (_reader: unknown, params: CompletePivot, output: string, opts: RunCrosstabOptions) => {
      ran.push({ params, output, opts });
      return {
        output,
        contentType,
        payload,
        rowCount: 1,
        columnCount: 2,
        rowsOmitted: 0,
        columnsOmitted: 0,
        rowsFilteredOut: 0,
        columnsFilteredOut: 0,
        cache: 'miss' as const,
        indexVersion: 7,
      };
    },
  } as unknown as RunCrosstabUseCase;
  const limiter = { run: (_user: string, _signal: AbortSignal, work: () => Promise<unknown>) => work() };
  const handlers = crosstabHandlers(silentLogger(), run, limiter as HeavyCallLimiter);
  const call = (request: Partial<pb.CrosstabRequest__Output>) =>
    new Promise<{ err: Partial<grpc.StatusObject> | null; res?: pb.CrosstabResponse }>((resolve) => {
      const emitter = Object.assign(new EventEmitter(), {
        request: { caller: null, paramsJson: '', output: '', bypassCache: false, ...request },
        metadata: new grpc.Metadata(),
        getDeadline: () => Infinity,
      });
      handlers.ExecuteCrosstab(emitter as never, (err, res) => resolve({ err, res: res ?? undefined }));
    });
  return { ran, call };
}

const complete = completeCrosstabExecute({ index: 'movies', rows: ['Genre'], totals: [{ aggregationType: 'count' }] });

describe('the crosstab service over gRPC', () => {
  it("runs the contract's completed params as they came: no default of its own", async () => {
    const { ran, call } = handler();
    const { err } = await call({ paramsJson: pivotParamsCodec.encode(complete), output: 'csv', asOfVersion: 4 });
    expect(err).toBeNull();
    const { output: _output, cache: _cache, verify: _verify, ...pivot } = complete;
    expect(ran[0].params).toEqual(pivot);
    expect(ran[0].output).toBe('csv');
    expect(ran[0].opts).toMatchObject({ cache: true, asOfVersion: 4 });
  });

  it('answers the content as bytes: text in UTF-8, a workbook as it was written', async () => {
    const text = await handler('<td>é</td>').call({ paramsJson: pivotParamsCodec.encode(complete), output: 'html' });
    expect(text.res?.content).toEqual({ contentType: 'text/html', body: Buffer.from('<td>é</td>') });
    const bytes = new Uint8Array([0x50, 0x4b, 3, 4]);
    const xlsx = await handler(bytes, 'application/xlsx').call({
      paramsJson: pivotParamsCodec.encode(complete),
      output: 'xlsx',
    });
    expect(xlsx.res?.content?.body).toBe(bytes);
    expect(xlsx.res).toMatchObject({ rowCount: 1, columnCount: 2, cache: 'miss', indexVersion: 7 });
  });

  it.each<[string, Partial<pb.CrosstabRequest__Output>, string]>([
    [
      'an unknown showAs',
      {
        paramsJson: JSON.stringify({ ...complete, output: undefined, totals: [{ showAs: 'median' }] }),
        output: 'html',
      },
      `totals[0].showAs must be one of ${SHOW_AS.map((s) => JSON.stringify(s)).join(', ')}`,
    ],
    ['no params', { output: 'html' }, 'params_json is not JSON'],
    [
      'no output',
      { paramsJson: pivotParamsCodec.encode(complete) },
      'output must be one of html, json, csv, xlsx, grid',
    ],
  ])('refuses a peer out of step sending %s with a 400 naming it', async (_, request, detail) => {
    const { ran, call } = handler();
    const { err } = await call(request);
    expect(err).toMatchObject({ code: grpc.status.INVALID_ARGUMENT });
    expect(err?.details).toContain(detail);
    expect(ran).toHaveLength(0);
  });
});
