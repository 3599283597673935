import { AppError } from '@quarry/errors';
import type { Logger } from '@quarry/logger';
import { METHODS, parseParams, type CheckedParamsOf, type MethodName } from '@quarry/contract';
import { callerFromWire, clientStreaming, unary, type pb } from '@quarry/rpc';
import type { SourceCaller, SourcesUseCases } from '../domain/sources.use-cases';
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

type SourceMethod = Extract<MethodName, `SOURCES.${string}`>;

/** A SOURCES.* call: its params checked again with the method's own contract schema, the result as JSON. */
function sourceCall<M extends SourceMethod>(
  log: Logger,
  rpc: string,
  method: M,
  sources: () => SourcesUseCases,
  run: (use: SourcesUseCases, who: SourceCaller, params: CheckedParamsOf<M>) => Promise<unknown>,
) {
  return unary<pb.SourceCall__Output, pb.SourceAnswer>(log, rpc, async (req) => {
    let raw: unknown;
    try {
      raw = JSON.parse(req.paramsJson);
    } catch {
      throw AppError.invalid('params_json is not JSON');
    }
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw))
      throw AppError.invalid('params_json must hold a JSON object');
    const params = parseParams(METHODS[method].params, raw as Record<string, unknown>) as CheckedParamsOf<M>;
    const who = { caller: callerFromWire(req.caller), tokenHash: req.tokenHash };
    return { resultJson: JSON.stringify(await run(sources(), who, params)) };
  });
}

/**
 * The first message of an upload is the header; every later one a piece of the body, passed on as it
 * comes. Sources answer 503 where the process has no Redis to keep them in.
 */
export function ingestHandlers(
  log: Logger,
  uploads: UploadRecordsUseCase,
  sources: SourcesUseCases | undefined,
): pb.IngestServiceHandlers {
  const use = (): SourcesUseCases => {
    if (!sources)
      throw AppError.unavailable('Sources are not available: the ingest service runs without Redis (REDIS_URL)');
    return sources;
  };
  return {
    CreateSource: sourceCall(log, 'CreateSource', 'SOURCES.CREATE', use, (u, who, p) => u.create(who, p)),
    FindSources: sourceCall(log, 'FindSources', 'SOURCES.FIND', use, (u, who, p) => u.find(who, p)),
    UpdateSource: sourceCall(log, 'UpdateSource', 'SOURCES.UPDATE', use, (u, who, p) => u.update(who, p)),
    DeleteSource: sourceCall(log, 'DeleteSource', 'SOURCES.DELETE', use, (u, who, p) => u.delete(who, p)),
    RunSource: sourceCall(log, 'RunSource', 'SOURCES.RUN', use, (u, who, p) => u.run(who, p)),
    SourceRuns: sourceCall(log, 'SourceRuns', 'SOURCES.RUNS', use, (u, who, p) => u.runs(who, p)),
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
