import { AppError } from '@quarry/errors';
import type { IndexCatalog, IndexEntry } from '@quarry/metadata-store';
import { restrictedQuery, type QueryNode, type Reader } from '@quarry/query-language';
import { fieldsOf, readableIndex } from '@quarry/snapshots';
import type { PivotEngine } from '../ports/pivot-engine.port';
import type { CachedResult, CacheStatus, ResultCache } from '@quarry/result-cache';
import { buildGrid } from './crosstab-grid';
import { crosstabCells, crosstabSpec, MAX_CELLS, type CrosstabRequestInput, type CrosstabSpec } from './crosstab-spec';
import { renderHtml } from './render-html';

export interface RunCrosstabInput extends CrosstabRequestInput {
  index: string;
  query: string;
}

export interface CrosstabResult {
  /** The table when output is "html", else ''. */
  html: string;
  /** The grid as JSON when output is "grid", else ''. */
  gridJson: string;
  rowCount: number;
  columnCount: number;
  cache: CacheStatus;
}

export interface RunCrosstabOptions {
  signal?: AbortSignal;
  /** false: neither read nor write the result cache for this call (the `cache` param). */
  cache?: boolean;
  /** Runs the pivot under the process's cap on heavy calls; a cache hit does not take a slot. */
  heavy?: <T>(work: () => Promise<T>) => Promise<T>;
}

function resultOf(output: 'html' | 'grid', value: CachedResult, cache: CacheStatus): CrosstabResult {
  return {
    html: output === 'html' ? value.payload : '',
    gridJson: output === 'grid' ? value.payload : '',
    rowCount: value.counts[0],
    columnCount: value.counts[1],
    cache,
  };
}

/** CROSSTAB.EXECUTE: permissions and realms, validation, the pivot, and the HTML table. */
export class RunCrosstabUseCase {
  constructor(
    private readonly catalog: IndexCatalog,
    private readonly pivots: PivotEngine,
    private readonly cache: ResultCache,
    private readonly now: () => number = Date.now,
  ) {}

  async execute(reader: Reader, input: RunCrosstabInput, output: 'html' | 'grid', opts: RunCrosstabOptions = {}): Promise<CrosstabResult> {
    const entry = await readableIndex(this.catalog, reader, input.index, (gone) => this.pivots.forget(gone));
    const spec = crosstabSpec(entry, input);
    const where = restrictedQuery(reader, entry.name, input.query, { fields: fieldsOf(entry), now: this.now() });
    const use = opts.cache !== false && this.cache.enabled;
    // The snapshot file is new with every load, so a reload or a drop and re-load never meets old entries;
    // `where` carries the caller's realms and `spec` is the validated request (fields resolved, defaults filled).
    const key = ['crosstab', output, entry.name, entry.version, entry.snapshot, where, spec];
    const found = use ? this.cache.get(key) : undefined;
    if (found) return resultOf(output, found, 'hit');
    const work = () => this.compute(entry, where, spec, output, opts.signal);
    const value = await (opts.heavy ? opts.heavy(work) : work());
    if (use) this.cache.set(key, value);
    return resultOf(output, value, use ? 'miss' : 'bypass');
  }

  private async compute(entry: IndexEntry, where: QueryNode, spec: CrosstabSpec, output: 'html' | 'grid', signal?: AbortSignal): Promise<CachedResult> {
    // One pass yields the key counts and the groups; over the limit it stops at the counts.
    const { keys, groups } = await this.pivots.pivot(entry, where, spec, MAX_CELLS, signal);
    const cells = crosstabCells(keys, spec);
    if (cells > MAX_CELLS) {
      throw AppError.invalid(
        `The crosstab would have ${cells} cells (${keys.rows} rows x ${keys.columns} columns x ${spec.totals.length} totals); the limit is ${MAX_CELLS}. Filter the query or use fewer fields.`,
      );
    }
    const grid = buildGrid(spec, groups);
    return { payload: output === 'html' ? renderHtml(grid) : JSON.stringify(grid), counts: [grid.rows.length, grid.columns.length] };
  }
}
