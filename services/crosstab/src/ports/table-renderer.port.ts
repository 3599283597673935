import type { CachedResult } from '@quarry/result-cache';
import type { TableJob } from '../domain/table-result';

/**
 * Builds and renders large tables away from the service's event loop, so a 100,000-cell HTML table
 * does not hold up the calls that share the loop (DESIGN "Embedding, fairness and audit"). Adapters
 * must answer exactly what `tableResult` answers for the same job, an AppError included, and never
 * block the calling thread for long at a time (the groups cross in slices).
 */
export interface TableRenderer {
  render(job: TableJob, signal?: AbortSignal): Promise<CachedResult>;
  close(): Promise<void>;
}
