import type { CompletePivot } from '@quarry/contract';
import type { IndexCatalog, IndexEntry, RollupDef } from '@quarry/metadata-store';
import type { RunCrosstabUseCase } from './run-crosstab.use-case';
import { WarmRollupsUseCase } from './warm-rollups.use-case';

const entry = (name: string, rollups: RollupDef[] | undefined): IndexEntry =>
  ({
    name,
    fields: [
      { name: 'origin', type: 'string' },
      { name: 'date', type: 'date', grain: 'month' },
      { name: 'delay', type: 'number' },
    ],
    rollups,
  }) as unknown as IndexEntry;

const om: RollupDef = {
  name: 'om',
  rows: ['origin'],
  columns: [{ field: 'date', grain: 'month' }],
  totals: [{ kind: 'count' }, { kind: 'sum', field: 'delay' }, { kind: 'countDistinct', field: 'origin' }],
};
const oy: RollupDef = {
  name: 'oy',
  rows: ['origin'],
  columns: [{ field: 'date', grain: 'year' }],
  totals: [{ kind: 'count' }],
};

function fakes(entries: IndexEntry[], fail: (p: CompletePivot) => boolean = () => false) {
  const calls: Array<{ params: CompletePivot; output: string; cache: unknown; admin: boolean }> = [];
  const catalog = { listIndexes: async () => entries } as unknown as IndexCatalog;
  const run = {
    run: async (reader: { admin: boolean }, params: CompletePivot, output: string, opts: { cache?: boolean }) => {
      calls.push({ params, output, cache: opts.cache, admin: reader.admin });
      if (fail(params)) throw new Error('over the cell limit');
      return {};
    },
  } as unknown as RunCrosstabUseCase;
  return { catalog, run, calls };
}

describe('warming the rollups at start', () => {
  it("runs each rollup's own crosstab, uncached, as a table, a fixed number of times", async () => {
    const { catalog, run, calls } = fakes([entry('flights', [om, oy]), entry('plain', undefined)]);
    const ran = await new WarmRollupsUseCase(catalog, run).run(10_000, 3);
    expect(ran).toBe(6);
    expect(calls.map((c) => c.params.columns.map((col) => col.dateGroup ?? col.field))).toEqual([
      ['date'],
      ['date'],
      ['date'],
      ['year'],
      ['year'],
      ['year'],
    ]);
    expect(
      calls.every((c) => c.output === 'html' && c.cache === false && c.admin && c.params.index === 'flights'),
    ).toBe(true);
    expect(calls[0].params.rows.map((r) => r.field)).toEqual(['origin']);
    expect(calls[0].params.totals.map((t) => [t.aggregationType, t.field ?? null])).toEqual([
      ['Count', null],
      ['Sum', 'delay'],
      ['CountDistinct', 'origin'],
    ]);
    expect(calls[0].params.subtotals).toBe(true);
  });

  it('stops a rollup at its first failure and goes on with the next', async () => {
    const { catalog, run, calls } = fakes([entry('flights', [om, oy])], (p) => p.columns[0]?.dateGroup === undefined);
    expect(await new WarmRollupsUseCase(catalog, run).run(10_000, 4)).toBe(4);
    expect(calls.length).toBe(5);
  });

  it('stops once its signal is aborted (the module stopping)', async () => {
    const stop = new AbortController();
    const { catalog, run, calls } = fakes([entry('flights', [om, oy])], () => {
      stop.abort();
      return false;
    });
    expect(await new WarmRollupsUseCase(catalog, run).run(10_000, 16, stop.signal)).toBe(1);
    expect(calls).toHaveLength(1);
  });

  it('stops when its time is spent', async () => {
    let now = 0;
    const { catalog, run } = fakes([entry('flights', [om, oy])]);
    const slow = {
      run: async (...args: Parameters<RunCrosstabUseCase['run']>) => {
        now += 400;
        return run.run(...args);
      },
    } as unknown as RunCrosstabUseCase;
    expect(await new WarmRollupsUseCase(catalog, slow, () => now).run(1000, 16)).toBe(3);
  });

  it('a rollup whose crosstab is refused (a field gone, say) neither throws nor stops the others', async () => {
    const gone: RollupDef = { ...om, name: 'gone', rows: ['nowhere'] };
    const { catalog, run, calls } = fakes([entry('flights', [gone, oy])], (p) =>
      p.rows.some((r) => r.field === 'nowhere'),
    );
    await expect(new WarmRollupsUseCase(catalog, run).run(1000, 2)).resolves.toBe(2);
    expect(calls.map((c) => c.params.rows[0].field)).toEqual(['nowhere', 'origin', 'origin']);
  });
});
