import { completeCrosstabExecute } from '@quarry/contract';
import type { RunCrosstabInput } from '../domain/run-crosstab.use-case';

/** A CROSSTAB.EXECUTE request as a caller sends it (validated; `index` optional here). */
export type SentCrosstab = Omit<Parameters<typeof completeCrosstabExecute>[0], 'index'> & { index?: string };

/** A crosstab request as the gateway hands it on: completed by the contract, as in production. */
export function crosstabInput(sent: SentCrosstab): RunCrosstabInput {
  return completeCrosstabExecute({ index: 'test', ...sent });
}
