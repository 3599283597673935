import { completeCrosstabExecute, type CompletePivot } from '@quarry/contract';
import type { FieldDef } from '@quarry/query-language';
import type { AxisSpec, CrosstabSpec } from '../src/domain/crosstab-spec';

/** A CROSSTAB.EXECUTE request as a caller sends it (validated; `index` optional here). */
export type SentCrosstab = Omit<Parameters<typeof completeCrosstabExecute>[0], 'index'> & { index?: string };

/** A crosstab request as the gateway hands it on: completed by the contract, as in production. */
export function crosstabInput(sent: SentCrosstab): CompletePivot {
  return completeCrosstabExecute({ index: 'test', ...sent });
}

/** A field as an axis with no grouping, as crosstabSpec makes it. */
export function plainAxis(field: FieldDef): AxisSpec {
  return { field, reverse: false, keyType: field.type, name: field.name, param: 'rows[0]' };
}

/** A validated crosstab spec with every option at its default (no axes or totals unless given). */
export function specWith(over: Partial<CrosstabSpec>): CrosstabSpec {
  return {
    rows: [],
    columns: [],
    totals: [],
    formulaOrder: [],
    totalsOn: 'columns',
    timeZone: 'UTC',
    rowFilter: null,
    columnFilter: null,
    subtotals: false,
    rowOrder: { by: 'label', measure: 0, direction: 'asc' },
    columnOrder: { by: 'label', measure: 0, direction: 'asc' },
    rowLimit: null,
    columnLimit: null,
    otherRow: false,
    otherColumn: false,
    ...over,
  };
}
