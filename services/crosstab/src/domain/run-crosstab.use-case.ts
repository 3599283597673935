import { AppError, quoteInput } from '@quarry/errors';
import type { IndexCatalog, IndexEntry } from '@quarry/metadata-store';
import { restrictedQuery, type QueryNode, type Reader } from '@quarry/query-language';
import { fieldsOf, readableIndex } from '@quarry/snapshots/access';
import type { KeysAtLeast, PivotEngine, PivotRestriction, PivotResult, PivotTwin } from '../ports/pivot-engine.port';
import type { GroupRow } from './axis-value';
import type { CachedResult, ResultCache, SharedComputations } from '@quarry/result-cache';
import type { CacheStatus, CompletePivot } from '@quarry/contract';
import { crosstabCells, crosstabSpec, MAX_CELLS, type CrosstabSpec } from './crosstab-spec';
import type { TableRenderer } from '../ports/table-renderer.port';
import { CONTENT_TYPES, subtotalsOverLimit, tableResult, type CrosstabOutput } from './table-result';
import { buildPivotTable, type OuterCounts } from './pivot-table';
import { compareGroups, prepareCompare, type PreparedCompare } from './compare-pivots';
import { mergePasses, twinOf, withTwins } from './pass-twins';
import { otherExclusion, otherGroups, wantedOthers, type ChosenOuter } from './other-groups';
import { withCompare } from './period-compare';
import { compareCells, independentPivots, type Mismatch } from './independent-pivots';

/**
 * With rowLimit, columnLimit or a filter, the outermost level is chosen first from one pass over it;
 * it may have this many times the cell limit's keys (each pass holds them as groups, not cells).
 */
export const OUTER_KEYS_FACTOR = 10;

export { CROSSTAB_OUTPUTS, type CrosstabOutput } from './table-result';

/**
 * Tables built from at least this many groups are built and rendered off the event loop (when a renderer
 * is given): past it the loop would be held long enough to delay other calls; below it the trip to a thread costs more than it saves.
 */
export const OFF_LOOP_GROUPS = 5000;

export interface CrosstabResult {
  output: CrosstabOutput;
  /** The media type of the payload, as the API's results name it. */
  contentType: string;
  /** The HTML table, the JSON table, the CSV text, the XLSX file's bytes, or the chart grid as JSON, as `output` says. */
  payload: string | Uint8Array;
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
  /** The rollup that answered instead of a scan of the records. */
  servedBy?: string;
  /** The SHA-256 of the version's records file; '' for a version written before it was kept. */
  snapshotSha256: string;
  /** The engine that computed the groups (the one that first did, for a cache hit). */
  engine: string;
  /** With `verify`: the cells recomputed along the independent path, and how many differed. */
  verify?: { cells: number; mismatched: number };
  /** With `verify`: the first cells that differed, for the log. */
  mismatches?: Mismatch[];
}

export interface RunCrosstabOptions {
  signal?: AbortSignal;
  /** false: neither read nor write the result cache for this call (the `cache` param). */
  cache?: boolean;
  /** Run on this published version (a saved report's snapshot) instead of the current one. */
  asOfVersion?: number;
  /** The time relative dates are read at (Unix ms; a replay's first run's), else now. */
  now?: number;
  /**
   * Recompute every cell along an independent path (independentPivots: no rollup, no twin, no fold)
   * and compare: the answer itself is computed, never read from the cache, and shares no computation.
   */
  verify?: boolean;
  /**
   * Runs the pivot under the process's cap on heavy calls; a cache hit does not take a slot. `signal` is
   * the computation's (shared by identical calls: it aborts once every one of them has given up).
   */
  heavy?: <T>(work: () => Promise<T>, signal: AbortSignal | undefined) => Promise<T>;
}

function resultOf(output: CrosstabOutput, value: CachedResult, cache: CacheStatus, entry: IndexEntry): CrosstabResult {
  const [rowCount, columnCount, rowsOmitted, columnsOmitted, rowsFilteredOut = 0, columnsFilteredOut = 0] =
    value.counts;
  return {
    output,
    contentType: CONTENT_TYPES[output],
    payload: value.payload,
    rowCount,
    columnCount,
    rowsOmitted,
    columnsOmitted,
    rowsFilteredOut,
    columnsFilteredOut,
    cache,
    indexVersion: entry.version,
    snapshotSha256: entry.sha256 ?? '',
    engine: value.engine ?? '',
    ...(value.servedBy ? { servedBy: value.servedBy } : {}),
  };
}

/** A first estimate within this factor of the cell limit is worth a thorough sample when it could see more. */
const THOROUGH_WITHIN = 10;

/** CROSSTAB.EXECUTE: permissions and realms, validation, the pivot, and the table in the asked format. */
export class RunCrosstabUseCase {
  constructor(
    private readonly catalog: IndexCatalog,
    private readonly pivots: PivotEngine,
    private readonly cache: ResultCache,
    private readonly now: () => number = Date.now,
    private readonly tables?: TableRenderer,
    /** Identical crosstabs in flight computed once (absent: each call computes its own). */
    private readonly shared?: SharedComputations,
    /** The independent path `verify` recomputes along (by default the same engine asked for plain passes). */
    private readonly verifier: PivotEngine = independentPivots(pivots),
  ) {}

  async run(
    reader: Reader,
    input: CompletePivot,
    output: CrosstabOutput,
    opts: RunCrosstabOptions = {},
  ): Promise<CrosstabResult> {
    const entry = await readableIndex(this.catalog, reader, input.index, {
      onUnpublished: (gone) => this.pivots.forget(gone),
      version: opts.asOfVersion,
    });
    const asked = crosstabSpec(entry, input);
    withCompare(input, asked.totals, [...asked.rows, ...asked.columns]);
    // A chart draws the cells; subtotal bars or slices would count every record twice.
    const spec = output === 'grid' ? { ...asked, subtotals: false } : asked;
    const where = restrictedQuery(reader, entry.name, input.query, {
      fields: fieldsOf(entry),
      now: opts.now ?? this.now(),
    });
    if (opts.verify) return this.verified(entry, where, spec, output, opts);
    const use = opts.cache !== false && this.cache.enabled;
    // The snapshot file is new with every load, so a reload or a drop and re-load never meets old entries;
    // `where` carries the caller's realms and `spec` is the validated request (fields resolved, defaults filled).
    const key = ['crosstab', output, entry.name, entry.version, entry.snapshot, where, spec];
    const found = use ? this.cache.get(key) : undefined;
    if (found) return resultOf(output, found, 'hit', entry);
    const compute = (signal: AbortSignal | undefined) => {
      const work = () => this.compute(entry, where, spec, output, signal);
      return opts.heavy ? opts.heavy(work, signal) : work();
    };
    const value = await (this.shared ? this.shared.run([...key, use], opts.signal, compute) : compute(opts.signal));
    if (use) this.cache.set(key, value);
    return resultOf(output, value, use ? 'miss' : 'bypass', entry);
  }

  /**
   * The answer computed as any call computes it (rollups, twins, folds and all; the cache neither read
   * nor written), then every one of its groups' values computed again along the verifier's path and
   * compared. A mismatch is reported, not thrown: the caller sees both the answer and that it disagreed.
   */
  private async verified(
    entry: IndexEntry,
    where: QueryNode,
    spec: CrosstabSpec,
    output: CrosstabOutput,
    opts: RunCrosstabOptions,
  ): Promise<CrosstabResult> {
    const run = async () => {
      const drawn = await this.groupsAsShown(this.pivots, entry, where, spec, opts.signal);
      // The limits were checked by the first pass: the recomputation only recomputes.
      const again = await this.groupsAsShown(this.verifier, entry, where, spec, opts.signal, false);
      const { cells, mismatched, first } = compareCells(drawn.groups, again.groups);
      return { value: await this.render(entry, output, drawn, opts.signal), verify: { cells, mismatched }, first };
    };
    const { value, verify, first } = await (opts.heavy ? opts.heavy(run, opts.signal) : run());
    return { ...resultOf(output, value, 'bypass', entry), verify, ...(first.length ? { mismatches: first } : {}) };
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

  /**
   * A crosstab whose table as drawn cannot fit is refused before any pass over the records, from lower
   * bounds of its keys (a sample of a fixed size, the per-field counts kept at load): in bounded time
   * whatever the index size. Never refuses one that would fit: a bound is never
   * more than the pivot would count.
   */
  private async checkEstimate(entry: IndexEntry, where: QueryNode, spec: CrosstabSpec, signal?: AbortSignal) {
    // A filter may leave none of the outer values; a limit keeps at most that many.
    const drawn = (all: number, outer: number, limit: number | null, filter: unknown) =>
      filter ? 0 : limit === null ? all : Math.min(limit, outer);
    const bound = (least: KeysAtLeast) => {
      const rows = drawn(least.rows, least.outerRows, spec.rowLimit, spec.rowFilter);
      const columns = spec.columns.length
        ? drawn(least.columns, least.outerColumns, spec.columnLimit, spec.columnFilter)
        : 1;
      return { rows, columns, cells: crosstabCells({ rows, columns }, spec) };
    };
    const first = await this.pivots.keysAtLeast(entry, where, spec, signal);
    let { rows, columns, cells } = bound(first);
    // A selective filter leaves the first sample few records: when what it saw already comes within a
    // tenth of the limit, a larger sample (still bounded, tens of milliseconds) may prove the table too big
    // before a full pass does (the filtered crosstab over the limit at 120M rows).
    if (first.moreToSee && cells <= MAX_CELLS && cells * THOROUGH_WITHIN >= MAX_CELLS) {
      const more = await this.pivots.keysAtLeast(entry, where, spec, signal, { thorough: true });
      // Both are lower bounds, so the larger of each is one too (two samples may see different keys).
      ({ rows, columns, cells } = bound({
        rows: Math.max(first.rows, more.rows),
        outerRows: Math.max(first.outerRows, more.outerRows),
        columns: Math.max(first.columns, more.columns),
        outerColumns: Math.max(first.outerColumns, more.outerColumns),
      }));
    }
    if (cells > MAX_CELLS)
      throw AppError.invalid(
        `The crosstab would have ${cells} cells or more (${rows} rows x ${columns} columns x ${spec.totals.length} totals); the limit is ${MAX_CELLS}. Filter the query or use fewer fields.`,
      );
  }

  /**
   * The outer values of one axis that rowLimit / columnLimit and rowFilter / columnFilter keep, from a
   * pass over that level alone (its values and their totals, ordered as the table orders them).
   */
  private async chooseOuter(
    pivots: PivotEngine,
    entry: IndexEntry,
    where: QueryNode,
    spec: CrosstabSpec,
    axis: 'rows' | 'columns',
    signal?: AbortSignal,
    shifted?: PivotTwin,
  ): Promise<ChosenOuter> {
    const outerSpec: CrosstabSpec =
      axis === 'rows'
        ? { ...spec, rows: spec.rows.slice(0, 1), columns: [], subtotals: false, columnLimit: null, columnFilter: null }
        : {
            ...spec,
            rows: [],
            columns: spec.columns.slice(0, 1),
            subtotals: false,
            rowLimit: null,
            rowFilter: null,
          };
    const most = MAX_CELLS * OUTER_KEYS_FACTOR;
    const restrict = withTwins({}, shifted);
    const outer = await pivots.pivot(entry, where, outerSpec, most, signal, restrict);
    const n = axis === 'rows' ? outer.keys.rows : outer.keys.columns;
    if (n * spec.totals.length > most)
      throw AppError.invalid(
        `The crosstab's outermost ${axis === 'rows' ? 'row' : 'column'} field has ${n} values; with ${spec.totals.length} total(s) at most ${Math.floor(most / spec.totals.length)} can be ranked for ${axis === 'rows' ? 'rowLimit' : 'columnLimit'}. Filter the query.`,
      );
    const table = buildPivotTable(outerSpec, outer.groups);
    const keys = axis === 'rows' ? table.rows : table.columns;
    return {
      values: keys.map((k) => k[0]),
      counts:
        axis === 'rows'
          ? { omitted: table.rowsOmitted, filteredOut: table.rowsFilteredOut, outer: table.outerRows }
          : { omitted: table.columnsOmitted, filteredOut: table.columnsFilteredOut, outer: table.outerColumns },
      grand: outer.groups.find((g) => g.rowKey.length === 0 && g.columnKey.length === 0),
      shiftedGrand: twinOf(outer, restrict, shifted),
    };
  }

  /**
   * The pivot of the table as drawn. Without rowLimit, columnLimit or filters it is one pass. With them,
   * the kept outer values are chosen first, then the cells are read for those alone; the totals over
   * everything (a row's total across every column, each column's total, the grand total) come from
   * passes that leave the other axis unrestricted, so no total ever changes with what is shown. A
   * comparison's shifted records (and an Other row's or column's, which need the kept keys) are asked of
   * the same passes as twins; `shifted` holds them when every pass read its twin.
   */
  private async pivotAsDrawn(
    pivots: PivotEngine,
    entry: IndexEntry,
    where: QueryNode,
    spec: CrosstabSpec,
    signal?: AbortSignal,
    compare?: PreparedCompare,
  ): Promise<
    PivotResult & {
      outer?: { rows?: OuterCounts; columns?: OuterCounts };
      restrict?: PivotRestriction;
      shifted?: GroupRow[];
      shiftedOther?: (spec: CrosstabSpec) => Promise<GroupRow[]>;
    }
  > {
    const limitsRows = spec.rows.length > 0 && (spec.rowLimit !== null || spec.rowFilter !== null);
    const limitsColumns = spec.columns.length > 0 && (spec.columnLimit !== null || spec.columnFilter !== null);
    let shift: PivotTwin | undefined = compare?.twin;
    if (!limitsRows && !limitsColumns) {
      const only = withTwins({}, shift);
      const main = await pivots.pivot(entry, where, spec, MAX_CELLS, signal, only);
      return { ...main, shifted: twinOf(main, only, shift) };
    }
    // Kept keys on the compared field are chosen by their own period: the shifted records are others.
    const onField = (axes: CrosstabSpec['rows']) => axes[0]?.field.name === compare?.field;
    if ((limitsRows && onField(spec.rows)) || (limitsColumns && onField(spec.columns))) shift = undefined;
    const rows = limitsRows ? await this.chooseOuter(pivots, entry, where, spec, 'rows', signal, shift) : undefined;
    const columns = limitsColumns
      ? await this.chooseOuter(pivots, entry, where, spec, 'columns', signal, shift)
      : undefined;
    const restrict = { rows: rows?.values, columns: columns?.values };
    const notRows = otherExclusion(spec, 'rows', rows);
    const notColumns = otherExclusion(spec, 'columns', columns);
    // With an Other row or column the engine may read every record in this pass (folded), which then
    // holds every group of the table and no twin.
    const mainAsk = withTwins(notRows || notColumns ? { ...restrict, fold: true as const } : restrict, shift);
    const main = await pivots.pivot(entry, where, spec, MAX_CELLS, signal, mainAsk);
    const outer = { rows: rows?.counts, columns: columns?.counts };
    if (main.groups.length === 0) return { ...main, outer, restrict };
    // The Other groups of a compared period: the same passes over the shifted records, the same kept keys.
    const shiftedOtherOf = (other: GroupRow[]) =>
      other.length > 0
        ? (shiftedSpec: CrosstabSpec) => otherGroups(pivots, { entry, where, spec: shiftedSpec, signal }, rows, columns)
        : undefined;
    if (main.folded) {
      const groups = wantedOthers(main.groups, { rows: notRows !== undefined, columns: notColumns !== undefined });
      const other = groups.filter((g) => g.rowOther || g.columnOther);
      return { ...main, groups, outer, restrict, shiftedOther: shiftedOtherOf(other) };
    }
    // Each row's totals across every column, not only the kept ones (and the Other column's cells).
    const acrossAsk = withTwins({ rows: rows?.values }, shift, notColumns);
    const across =
      columns && spec.rows.length
        ? await pivots.pivot(
            entry,
            where,
            { ...spec, columns: [], columnLimit: null, columnFilter: null },
            MAX_CELLS,
            signal,
            acrossAsk,
          )
        : undefined;
    // Each column's totals down every row (and the Other row's cells).
    const downAsk = withTwins({ columns: columns?.values }, shift, notRows);
    const down =
      rows && spec.columns.length
        ? await pivots.pivot(
            entry,
            where,
            { ...spec, rows: [], rowLimit: null, rowFilter: null },
            MAX_CELLS,
            signal,
            downAsk,
          )
        : undefined;
    const grand = (rows ?? columns)?.grand;
    const groups = mergePasses(main.groups, { across: across?.groups, down: down?.groups, all: grand ? [grand] : [] });
    const other = await otherGroups(pivots, { entry, where, spec, signal }, rows, columns, {
      rowCells: down && twinOf(down, downAsk, notRows),
      columnCells: across && twinOf(across, acrossAsk, notColumns),
    });
    const shiftedAcross = across && twinOf(across, acrossAsk, shift);
    const shiftedDown = down && twinOf(down, downAsk, shift);
    const shiftedAll = (rows ?? columns)?.shiftedGrand;
    const shiftedMain = twinOf(main, mainAsk, shift);
    const complete = shiftedMain && (!across || shiftedAcross) && (!down || shiftedDown) && shiftedAll;
    const shifted = complete
      ? mergePasses(shiftedMain, { across: shiftedAcross, down: shiftedDown, all: shiftedAll })
      : undefined;
    return { ...main, groups: [...groups, ...other], outer, restrict, shifted, shiftedOther: shiftedOtherOf(other) };
  }

  private async compute(
    entry: IndexEntry,
    where: QueryNode,
    spec: CrosstabSpec,
    output: CrosstabOutput,
    signal?: AbortSignal,
  ): Promise<CachedResult> {
    const shown = await this.groupsAsShown(this.pivots, entry, where, spec, signal);
    return this.render(entry, output, shown, signal);
  }

  /** The table's groups as drawn, every total and comparison in them, checked against the limits first. */
  private async groupsAsShown(
    pivots: PivotEngine,
    entry: IndexEntry,
    where: QueryNode,
    spec: CrosstabSpec,
    signal?: AbortSignal,
    checkLimits = true,
  ) {
    if (checkLimits) {
      await this.checkBins(entry, where, spec, signal);
      await this.checkEstimate(entry, where, spec, signal);
    }
    const prepared = await prepareCompare(pivots, entry, where, spec, signal);
    const drawn = await this.pivotAsDrawn(pivots, entry, where, spec, signal, prepared);
    const { keys, tooManyGroups, drill, outer, servedBy } = drawn;
    // The limit counts the table as drawn: after rowLimit, columnLimit and the filters.
    const cells = crosstabCells(keys, spec);
    if (cells > MAX_CELLS) {
      throw AppError.invalid(
        `The crosstab would have ${cells} cells (${keys.rows} rows x ${keys.columns} columns x ${spec.totals.length} totals); the limit is ${MAX_CELLS}. Filter the query or use fewer fields.`,
      );
    }
    if (tooManyGroups) throw subtotalsOverLimit();
    const restrict = drawn.restrict ?? {};
    const { spec: shown, groups } = await compareGroups(
      pivots,
      entry,
      where,
      spec,
      prepared,
      { groups: drawn.groups, restrict, shifted: drawn.shifted, shiftedOther: drawn.shiftedOther },
      signal,
    );
    return { spec: shown, groups, drill, outer, servedBy };
  }

  private async render(
    entry: IndexEntry,
    output: CrosstabOutput,
    { spec, groups, drill, outer, servedBy }: Awaited<ReturnType<RunCrosstabUseCase['groupsAsShown']>>,
    signal?: AbortSignal,
  ): Promise<CachedResult> {
    const job = { spec, groups, drill, outer, output, index: entry.name };
    const table = await (this.tables && groups.length >= OFF_LOOP_GROUPS
      ? this.tables.render(job, signal)
      : tableResult(job));
    return { ...table, engine: this.pivots.engineName, ...(servedBy ? { servedBy } : {}) };
  }
}
