import { completeCrosstabExecute, type CompletePivot } from '@quarry/contract';
import type { FieldDef } from '@quarry/query-language';
import type { AxisSpec } from '../src/domain/crosstab-spec';

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
