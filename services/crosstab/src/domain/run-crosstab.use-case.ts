import { AppError, quoteInput } from '@quarry/errors';
import type { IndexCatalog, IndexEntry } from '@quarry/metadata-store';
import { restrictedQuery, type QueryNode, type Reader } from '@quarry/query-language';
import { fieldsOf, readableIndex } from '@quarry/snapshots/access';
import type { PivotEngine } from '../ports/pivot-engine.port';
import type { CachedResult, ResultCache } from '@quarry/result-cache';
import type { CacheStatus } from '@quarry/contract';
import { crosstabCells, crosstabSpec, MAX_CELLS, type CrosstabRequestInput, type CrosstabSpec } from './crosstab-spec';
import type { TableRenderer } from '../ports/table-renderer.port';
import { subtotalsOverLimit, tableResult, type CrosstabOutput } from './table-result';

export { CROSSTAB_OUTPUTS, type CrosstabOutput } from './table-result';

/**
 * Tables built from at least this many groups are built and rendered off the event loop (when a renderer
 * is given): about 10 ms of work on the loop; below it the trip to a thread costs more than it saves.
 */
export const OFF_LOOP_GROUPS = 5000;

export interface RunCrosstabInput extends CrosstabRequestInput {
  index: string;
  query: string;
  /** Run on this published version (a saved report's snapshot) instead of the current one. */
  asOfVersion?: number;
}

export interface CrosstabResult {
  output: CrosstabOutput;
  /** The HTML table, the JSON table, the CSV text, the XLSX file as base64, or the chart grid as JSON, as `output` says. */
  payload: string;
  rowCount: number;
  columnCount: number;
  /** Values of the outermost row (column) level left out by rowLimit (columnLimit). */
  rowsOmitted: number;
  columnsOmitted: number;
  rowsFilteredOut: number;
  columnsFilteredOut: number;
  cache: CacheStatus;
  /** The version of the index the pivot ran on. */
  indexVersion: number;
}

export interface RunCrosstabOptions {
  signal?: AbortSignal;
  /** false: neither read nor write the result cache for this call (the `cache` param). */
  cache?: boolean;
  /** Runs the pivot under the process's cap on heavy calls; a cache hit does not take a slot. */
  heavy?: <T>(work: () => Promise<T>) => Promise<T>;
}

function resultOf(
  output: CrosstabOutput,
  value: CachedResult,
  cache: CacheStatus,
  indexVersion: number,
): CrosstabResult {
  const [rowCount, columnCount, rowsOmitted, columnsOmitted, rowsFilteredOut = 0, columnsFilteredOut = 0] =
    value.counts;
  return {
    output,
    payload: value.payload,
    rowCount,
    columnCount,
    rowsOmitted,
    columnsOmitted,
    rowsFilteredOut,
    columnsFilteredOut,
    cache,
    indexVersion,
  };
}

/** CROSSTAB.EXECUTE: permissions and realms, validation, the pivot, and the table in the asked format. */
export class RunCrosstabUseCase {
  constructor(
    private readonly catalog: IndexCatalog,
    private readonly pivots: PivotEngine,
    private readonly cache: ResultCache,
    private readonly now: () => number = Date.now,
    private readonly tables?: TableRenderer,
  ) {}

  async run(
    reader: Reader,
    input: RunCrosstabInput,
    output: CrosstabOutput,
    opts: RunCrosstabOptions = {},
  ): Promise<CrosstabResult> {
    const entry = await readableIndex(this.catalog, reader, input.index, {
      onUnpublished: (gone) => this.pivots.forget(gone),
      version: input.asOfVersion,
    });
    const asked = crosstabSpec(entry, input);
    // A chart draws the cells; subtotal bars or slices would count every record twice.
    const spec = output === 'grid' ? { ...asked, subtotals: false } : asked;
    const where = restrictedQuery(reader, entry.name, input.query, { fields: fieldsOf(entry), now: this.now() });
    const use = opts.cache !== false && this.cache.enabled;
    // The snapshot file is new with every load, so a reload or a drop and re-load never meets old entries;
    // `where` carries the caller's realms and `spec` is the validated request (fields resolved, defaults filled).
    const key = ['crosstab', output, entry.name, entry.version, entry.snapshot, where, spec];
    const found = use ? this.cache.get(key) : undefined;
    if (found) return resultOf(output, found, 'hit', entry.version);
    const work = () => this.compute(entry, where, spec, output, opts.signal);
    const value = await (opts.heavy ? opts.heavy(work) : work());
    if (use) this.cache.set(key, value);
    return resultOf(output, value, use ? 'miss' : 'bypass', entry.version);
  }

  /**
   * A bin width so fine that its axis alone would pass the cell limit is refused, naming the parameter,
   * after one min/max aggregate and before the pivot reads anything else.
   */
  private async checkBins(entry: IndexEntry, where: QueryNode, spec: CrosstabSpec, signal?: AbortSignal) {
    const axes = [
      ...spec.rows.map((a, i) => ({ a, param: `rows[${i}]` })),
      ...spec.columns.map((a, i) => ({ a, param: `columns[${i}]` })),
    ];
    for (const { a, param } of axes) {
      if (!a.bin) continue;
      const range = await this.pivots.fieldRange(entry, where, a.field.name, signal);
      if (!range) continue;
      const { width, origin } = a.bin;
      const bins = Math.floor((range[1] - origin) / width) - Math.floor((range[0] - origin) / width) + 1;
      if (bins * spec.totals.length > MAX_CELLS)
        throw AppError.invalid(
          `${param}.bin.width ${width} makes ${bins} bins of ${quoteInput(a.field.name)} (${range[0]} to ${range[1]}); with ${spec.totals.length} total(s) the crosstab may have at most ${MAX_CELLS} cells. Use a wider bin.`,
        );
    }
  }

  private async compute(
    entry: IndexEntry,
    where: QueryNode,
    spec: CrosstabSpec,
    output: CrosstabOutput,
    signal?: AbortSignal,
  ): Promise<CachedResult> {
    await this.checkBins(entry, where, spec, signal);
    // One pass yields the key counts and the groups; over the limit it stops at the counts.
    const { keys, groups, tooManyGroups, drill } = await this.pivots.pivot(entry, where, spec, MAX_CELLS, signal);
    const cells = crosstabCells(keys, spec);
    if (cells > MAX_CELLS) {
      throw AppError.invalid(
        `The crosstab would have ${cells} cells (${keys.rows} rows x ${keys.columns} columns x ${spec.totals.length} totals); the limit is ${MAX_CELLS}. Filter the query or use fewer fields.`,
      );
    }
    if (tooManyGroups) throw subtotalsOverLimit();
    const job = { spec, groups, drill, output, index: entry.name };
    return this.tables && groups.length >= OFF_LOOP_GROUPS ? this.tables.render(job, signal) : tableResult(job);
  }
}
