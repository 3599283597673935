import { AppError } from '@quarry/errors';
import type { Logger } from '@quarry/logger';
import { callerFromWire, clientStreaming, type pb } from '@quarry/rpc';
import {
  LOAD_MODES,
  SOURCE_FORMATS,
  type LoadOutcome,
  type UploadRecordsUseCase,
  type UploadRequest,
} from '../domain/upload-records.use-case';

function oneOf<T extends string>(value: string, allowed: readonly T[], what: string, fallback?: T): T {
  if (value === '' && fallback) return fallback;
  const found = allowed.find((a) => a === value);
  if (!found) throw AppError.invalid(`${what} must be one of ${allowed.join(', ')}`);
  return found;
}

function headerOf(h: pb.UploadHeader__Output): UploadRequest {
  return {
    caller: callerFromWire(h.caller),
    index: h.index,
    mode: oneOf(h.mode, LOAD_MODES, 'mode', 'replace'),
    ...(h.key ? { key: h.key } : {}),
    onError: oneOf(h.onError, ['fail', 'skip'] as const, 'onError', 'fail'),
    ...(h.maxErrors !== undefined && h.maxErrors !== null ? { maxErrors: h.maxErrors } : {}),
    format: oneOf(h.format, SOURCE_FORMATS, 'format'),
    gzip: h.gzip,
  };
}

export function outcomeToWire(o: LoadOutcome): pb.LoadOutcome {
  return {
    index: o.index,
    version: o.version ?? 0,
    ...(o.rowsRead !== undefined ? { rowsRead: o.rowsRead } : {}),
    loaded: o.loaded,
    rejected: o.rejected,
    rejects: o.rejects.map((r) => ({
      ...(r.line !== undefined ? { line: r.line } : {}),
      ...(r.record !== undefined ? { record: r.record } : {}),
      column: r.column ?? '',
      reason: r.reason,
    })),
    durationMs: o.durationMs,
    replaced: o.replaced,
    recordCount: o.recordCount ?? 0,
    failureCode: o.failure?.code ?? '',
    failureDetail: o.failure?.detail ?? '',
  };
}

/** The first message is the header; every later one a piece of the body, passed on as it comes. */
export function ingestHandlers(log: Logger, uploads: UploadRecordsUseCase): pb.IngestServiceHandlers {
  return {
    UploadRecords: clientStreaming<pb.UploadChunk__Output, pb.LoadOutcome>(
      log,
      'UploadRecords',
      async (messages, ctx) => {
        const iterator = messages[Symbol.asyncIterator]();
        const first = await iterator.next();
        if (first.done || first.value.part !== 'header' || !first.value.header)
          throw AppError.invalid('An upload starts with its header');
        const req = headerOf(first.value.header);
        // The body ends with its end marker, counting its bytes; a stream that ends without it was cut off.
        async function* body(): AsyncGenerator<Uint8Array> {
          let bytes = 0;
          for (;;) {
            const next = await iterator.next();
            if (next.done) throw AppError.timeout('The upload was cut off before its body had arrived');
            const piece = next.value;
            if (piece.part === 'end' && piece.end) {
              if (piece.end.bytes !== bytes) throw AppError.invalid('The upload arrived incomplete; send it again');
              return;
            }
            if (piece.part !== 'data' || !piece.data) throw AppError.invalid('An upload has one header');
            bytes += piece.data.length;
            yield piece.data;
          }
        }
        return outcomeToWire(await uploads.upload(req, body(), ctx.signal));
      },
    ),
  };
}
