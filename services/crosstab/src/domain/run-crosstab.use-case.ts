import { AppError } from '@quarry/errors';
import type { IndexCatalog } from '@quarry/metadata-store';
import { restrictedQuery, type Reader } from '@quarry/query-language';
import { fieldsOf, readableIndex } from '@quarry/snapshots';
import type { PivotEngine } from '../ports/pivot-engine.port';
import { buildGrid, type CrosstabGrid } from './crosstab-grid';
import { crosstabSpec, MAX_CELLS, type CrosstabRequestInput } from './crosstab-spec';
import { renderHtml } from './render-html';

export interface RunCrosstabInput extends CrosstabRequestInput {
  index: string;
  query: string;
}

export interface CrosstabResult {
  grid: CrosstabGrid;
  html: string;
  rowCount: number;
  columnCount: number;
}

/** CROSSTAB.EXECUTE: permissions and realms, validation, the pivot, and the HTML table. */
export class RunCrosstabUseCase {
  constructor(
    private readonly catalog: IndexCatalog,
    private readonly pivots: PivotEngine,
    private readonly now: () => number = Date.now,
  ) {}

  async execute(reader: Reader, input: RunCrosstabInput, output: 'html' | 'grid'): Promise<CrosstabResult> {
    const entry = await readableIndex(this.catalog, reader, input.index);
    const spec = crosstabSpec(entry, input);
    const where = restrictedQuery(reader, entry.name, input.query, { fields: fieldsOf(entry), now: this.now() });
    const keys = await this.pivots.distinctKeys(entry, where, spec);
    const cells = keys.rows * Math.max(keys.columns, 1) * spec.totals.length;
    if (cells > MAX_CELLS) {
      throw AppError.invalid(
        `The crosstab would have ${cells} cells (${keys.rows} rows x ${keys.columns} columns x ${spec.totals.length} totals); the limit is ${MAX_CELLS}. Filter the query or use fewer fields.`,
      );
    }
    const grid = buildGrid(spec, await this.pivots.aggregate(entry, where, spec));
    return {
      grid,
      html: output === 'html' ? renderHtml(grid) : '',
      rowCount: grid.rows.length,
      columnCount: grid.columns.length,
    };
  }
}
