import type { Caller, RequestTrace } from './service-clients.port';

export interface SearchExportRequest {
  index: string;
  query: string;
  sort: ReadonlyArray<{ field: string; direction: 'asc' | 'desc' }>;
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
    trace: RequestTrace,
  ): Promise<number>;
}
