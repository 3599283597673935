import type { AppError } from '@quarry/errors';
import type { Caller, RequestTrace } from './service-clients.port';

export type UploadMode = 'replace' | 'append' | 'upsert';
export type UploadFormat = 'csv' | 'json' | 'jsonl' | 'parquet';

/** What an upload asks for, as its URL and headers said it. */
export interface UploadInput {
  index: string;
  mode: UploadMode;
  key?: string;
  onError: 'fail' | 'skip';
  maxErrors?: number;
  format: UploadFormat;
  gzip: boolean;
}

/** The answer of an upload (docs/uploads.md): every row accounted for, published or not. */
export interface UploadAnswer {
  index: string;
  version?: number;
  rowsRead?: number;
  loaded: number;
  rejected: number;
  rejects: Array<{ line?: number; record?: number; column?: string; reason: string }>;
  durationMs: number;
  replaced: number;
  recordCount?: number;
  /** The load failed and published nothing. */
  failure?: { code: AppError['code']; detail: string };
}

/**
 * The ingest service as the gateway calls it. Adapters guarantee: the body is passed on as it is read
 * (never held whole), and a body that throws ends the call with that error; refusals before the load
 * reject with their AppError; a load that failed resolves with `failure` and its accounting.
 */
export interface RecordUploads {
  upload(
    caller: Caller,
    input: UploadInput,
    body: AsyncIterable<Uint8Array>,
    trace: RequestTrace,
    signal: AbortSignal,
  ): Promise<UploadAnswer>;
}
