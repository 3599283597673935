import { pivotParamsCodec } from '@quarry/contract';
import type { IndexCatalog, IndexEntry, RollupDef } from '@quarry/metadata-store';
import type { Reader } from '@quarry/query-language';
import type { RunCrosstabUseCase } from './run-crosstab.use-case';

/** Runs of each rollup's own crosstab at start: about what the JIT needs before a call runs optimised code. */
export const WARM_RUNS = 32;
/** The most a start spends warming rollups, all indexes together. */
export const WARM_BUDGET_MS = 3000;

const WARMING: Reader = { admin: true, indexes: ['*'], realms: [] };

const AGGREGATION = {
  count: 'Count',
  sum: 'Sum',
  average: 'Average',
  min: 'Min',
  max: 'Max',
  countDistinct: 'CountDistinct',
} as const;

/** The crosstab a rollup exists for: its rows by its columns, its totals, with subtotals, as a table. */
export function rollupCrosstab(entry: IndexEntry, def: RollupDef): Record<string, unknown> {
  const grainOf = (name: string) => entry.fields.find((f) => f.name === name)?.grain;
  return {
    index: entry.name,
    query: '*',
    rows: def.rows,
    columns: def.columns.map((c) =>
      c.grain === undefined || c.grain === grainOf(c.field)
        ? { field: c.field }
        : { field: c.field, dateGroup: c.grain },
    ),
    totals: def.totals.map((t) => ({ aggregationType: AGGREGATION[t.kind], ...(t.field ? { field: t.field } : {}) })),
    subtotals: true,
  };
}

/**
 * At start, each rollup answers its own crosstab a few times before the service reports ready: the
 * version's file is opened and its rollup read once, and the pivot and table code a covered crosstab
 * runs is compiled, so the first calls after a start are not the slow ones (a cold process answered a
 * covered crosstab three times slower for its first dozen calls). Bounded in time; a rollup whose
 * crosstab fails (over the cell limit, say) is left for the calls to find out.
 */
export class WarmRollupsUseCase {
  constructor(
    private readonly catalog: IndexCatalog,
    private readonly crosstabs: RunCrosstabUseCase,
    private readonly now: () => number = performance.now.bind(performance),
  ) {}

  /** How many crosstabs ran. */
  async run(budgetMs = WARM_BUDGET_MS, runs = WARM_RUNS, signal?: AbortSignal): Promise<number> {
    const until = this.now() + budgetMs;
    let ran = 0;
    for (const entry of await this.catalog.listIndexes()) {
      for (const def of entry.rollups ?? []) {
        for (let i = 0; i < runs && this.now() < until && !signal?.aborted; i++) {
          const ok = await Promise.resolve()
            .then(() => pivotParamsCodec.decode(JSON.stringify(rollupCrosstab(entry, def))))
            .then((params) => this.crosstabs.run(WARMING, params, 'html', { cache: false, signal }))
            .then(
              () => true,
              () => false,
            );
          if (!ok) break;
          ran++;
        }
      }
    }
    return ran;
  }
}
