import { AppError } from '@quarry/errors';
import type { ChartRequest, ReportToSave, ServiceClients } from '../ports/service-clients.port';
import { DispatchMethodUseCase } from './dispatch-method.use-case';
import { createMethodHandlers } from './handlers/method-handlers';
import { principalWith } from '../../test-support/principal';

// Chart params are refused before the crosstab runs: a pivot over millions of records must not be
// computed only to learn that the chart name was misspelt.

const principal = principalWith(['query:execute', 'reports:write']);

function fakeServices() {
  const calls: string[] = [];
  let rendered: ChartRequest | undefined;
  let saved: ReportToSave | undefined;
  const services: Partial<ServiceClients> = {
    pivot: async () => {
      calls.push('crosstab');
      return {
        table: {
          contentType: 'application/json',
          body: '{}',
          rowCount: 0,
          columnCount: 0,
          rowsOmitted: 0,
          columnsOmitted: 0,
          rowsFilteredOut: 0,
          columnsFilteredOut: 0,
        },
        indexVersion: 1,
        snapshot: '',
        engine: 'test',
      };
    },
    renderChart: async (_caller, req) => {
      calls.push('chart');
      rendered = req;
      return req.imageFormat === 'svg'
        ? { contentType: 'image/svg+xml', data: '<svg/>', width: req.width, height: req.height, chartType: 'Pie2D' }
        : { contentType: 'image/png', data: 'iVBOR', width: req.width, height: req.height, chartType: 'Pie2D' };
    },
    printTable: async () => Buffer.from('%PDF-1.4\n%%EOF\n').toString('base64'),
    saveReport: async (_caller, report) => {
      saved = report;
      return { guid: 'g1' };
    },
  };
  return { services: services as ServiceClients, calls, rendered: () => rendered, saved: () => saved };
}

const base = { index: 'movies', rows: ['Major Genre'], totals: [{ aggregationType: 'Count' }] };

async function refused(params: Record<string, unknown>): Promise<{ err: AppError; calls: string[] }> {
  const f = fakeServices();
  const err = await new DispatchMethodUseCase(createMethodHandlers({ services: f.services }))
    .call(principal, 'CROSSTAB.EXECUTE', { ...base, ...params }, { requestId: 'r' })
    .then(
      () => undefined,
      (e: unknown) => e,
    );
  if (!(err instanceof AppError)) throw new Error(`expected an AppError, got ${String(err)}`);
  return { err, calls: f.calls };
}

describe('CROSSTAB.EXECUTE chart params in the gateway', () => {
  it('an unknown chartType is a 400 listing the supported names, and no crosstab runs', async () => {
    const { err, calls } = await refused({ chartType: 'Radar3D' });
    expect(err.code).toBe('INVALID_ARGUMENT');
    expect(err.message).toMatch(
      /^chartType "Radar3D" is not supported; use one of Column2D, .*Heatmap, Treemap, Scatter$/,
    );
    expect(calls).toEqual([]);
  });

  it('a megabyte chartType is refused by its length, without being echoed', async () => {
    const { err, calls } = await refused({ chartType: 'x'.repeat(1_000_000) });
    expect(err.message).toBe('chartType must be at most 100 characters');
    expect(calls).toEqual([]);
  });

  it.each([
    ['Scatter', /Scatter needs at least 2 totals \(the first as x, the second as y\); 1 given/],
    [
      'mscombidy2d',
      /MSCombiDY2D needs at least 2 totals \(the first as columns on the left axis, the second as a line on the right axis\); 1 given/,
    ],
  ])('%s with one total is a 400 naming what it needs, before the crosstab', async (chartType, detail) => {
    const { err, calls } = await refused({ chartType });
    expect(err.message).toMatch(detail);
    expect(calls).toEqual([]);
  });

  it.each(['gif', 'SVG ', 'PNG', ''])('imageFormat %p is a 400 listing png, svg', async (imageFormat) => {
    const { err, calls } = await refused({ chartType: 'Pie2D', imageFormat });
    expect(err.message).toMatch(/imageFormat ".*" is not supported; use one of png, svg/);
    expect(calls).toEqual([]);
  });

  it('imageFormat without chartType is a 400', async () => {
    const { err, calls } = await refused({ imageFormat: 'svg' });
    expect(err.message).toBe('imageFormat needs chartType');
    expect(calls).toEqual([]);
  });

  it('svg travels to the chart service, comes back as text and is kept in the saved report', async () => {
    const f = fakeServices();
    const out = (
      await new DispatchMethodUseCase(createMethodHandlers({ services: f.services })).call(
        principal,
        'CROSSTAB.EXECUTE',
        { ...base, chartType: 'pie2d', imageFormat: 'svg', saveReport: { name: 'r' } },
        { requestId: 'r' },
      )
    ).data as Record<string, unknown>;
    expect(f.rendered()?.imageFormat).toBe('svg');
    expect(out).toMatchObject({ contentType: 'image/svg+xml', data: '<svg/>' });
    expect(f.saved()!.params).toMatchObject({ chartType: 'pie2d', imageFormat: 'svg' });
  });

  it('png stays the default and is saved as such', async () => {
    const f = fakeServices();
    const out = (
      await new DispatchMethodUseCase(createMethodHandlers({ services: f.services })).call(
        principal,
        'CROSSTAB.EXECUTE',
        { ...base, chartType: 'Pie2D', saveReport: { name: 'r' } },
        { requestId: 'r' },
      )
    ).data as Record<string, unknown>;
    expect(f.rendered()?.imageFormat).toBe('png');
    expect(out).toMatchObject({ contentType: 'image/png', data: 'iVBOR' });
    expect(f.saved()!.params).toMatchObject({ imageFormat: 'png' });
  });
});
