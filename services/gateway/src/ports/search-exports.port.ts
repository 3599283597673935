import type { CompleteSearch } from '@quarry/contract';
import type { Caller, RequestTrace } from './service-clients.port';

export interface SearchExportRequest {
  /** The search as the contract completed it; its page is not used. */
  search: CompleteSearch;
  /** A kept earlier version of the index (a saved report's snapshot) instead of the current one. */
  asOfVersion?: number;
}

/**
 * The query service's export of a search: every matching record written by its engine, with the
 * caller's realms. Adapters reject with AppError only, as ServiceClients does.
 */
export interface SearchExports {
  count(caller: Caller, req: SearchExportRequest, trace: RequestTrace): Promise<number>;
  /** Writes the file at `path` (the export store's); resolves with the records written. */
  write(
    caller: Caller,
    req: SearchExportRequest,
    format: 'csv' | 'jsonl' | 'parquet',
    path: string,
    /** `signal` cancels the write (the engine stops; the caller removes the file). */
    trace: RequestTrace & { signal?: AbortSignal },
  ): Promise<number>;
}
