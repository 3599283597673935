import type { IndexEntry } from '@quarry/metadata-store';
import type { QueryNode } from '@quarry/query-language';
import type { GroupRow } from '../domain/crosstab-grid';
import type { CrosstabSpec } from '../domain/crosstab-spec';

/**
 * Aggregation over a published index version. Adapters must guarantee:
 * - every total of a group is computed from the group's records (an Average's total is the average of
 *   the records, a distinct count's total is distinct over the set), never from other groups' values;
 * - blank values (null or empty text) group together, reported as null;
 * - dates on an axis group by their day, reported as YYYY-MM-DD;
 * - `distinctKeys` counts the row and column keys a pivot would have, without computing it.
 */
export interface PivotEngine {
  distinctKeys(entry: IndexEntry, where: QueryNode, spec: CrosstabSpec): Promise<{ rows: number; columns: number }>;
  aggregate(entry: IndexEntry, where: QueryNode, spec: CrosstabSpec): Promise<GroupRow[]>;
}
