import type { CacheStatus } from '@quarry/contract';

/** What one search or crosstab execution answered, and what a report saved from it records. */
export interface Execution {
  data: Record<string, unknown>;
  cache?: CacheStatus;
  /** The rollup a crosstab was answered from (meta.servedBy). */
  servedBy?: string;
  /** A crosstab's table rows, its chart's too (an image answers none of its own). */
  tableRows?: number;
  /** The index version (snapshot) it ran on. */
  indexVersion: number;
  index: string;
  /** The executable params with their defaults filled in (without saveReport and cache). */
  executable: Record<string, unknown>;
}
