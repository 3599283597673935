import type { SourceFormat } from './index-loader.port';

export interface SpooledUpload {
  file: string;
  /** Bytes written (after gzip was undone). */
  bytes: number;
  /** Removes the file; safe to call twice. */
  discard(): Promise<void>;
}

/**
 * Where an upload's body waits while it is loaded (the loader reads a file more than once, and Parquet
 * seeks). Adapters guarantee: the body is streamed to disk, never held whole; a body past `maxBytes`
 * (counted after gzip is undone) or bad gzip rejects with PAYLOAD_TOO_LARGE or INVALID_ARGUMENT and
 * leaves no file; an aborted `signal` stops the write and leaves no file.
 */
export interface UploadSpool {
  receive(
    body: AsyncIterable<Uint8Array>,
    options: { format: SourceFormat; gzip: boolean; maxBytes: number; signal: AbortSignal },
  ): Promise<SpooledUpload>;
}
