import path from 'node:path';
import { searchParamsCodec } from '@quarry/contract';
import { AppError } from '@quarry/errors';
import type { Logger } from '@quarry/logger';
import { callerFromWire, unary, type pb } from '@quarry/rpc';
import type { HeavyCallLimiter } from '@quarry/runtime';
import type { ExportSearchUseCase } from '../domain/export-search.use-case';
import type { SearchExportFormat } from '../ports/search-exporter.port';

const FORMATS: readonly SearchExportFormat[] = ['csv', 'jsonl', 'parquet'];

/** ExportSearch: a search's every record to a file (EXPORTS.START), or only their count. */
export function exportHandlers(
  log: Logger,
  exportSearch: ExportSearchUseCase,
  limiter: HeavyCallLimiter,
  /** QUARRY_EXPORT_DIR: the only folder a file is written to, whatever a caller names. */
  exportDir: string,
): Pick<pb.QueryServiceHandlers, 'ExportSearch'> {
  return {
    ExportSearch: unary<pb.ExportSearchRequest__Output, pb.ExportSearchResponse>(
      log,
      'ExportSearch',
      async (req, ctx) => {
        const caller = callerFromWire(req.caller);
        // The params as the gateway's contract completed them, checked by the same schema.
        const { index, query, sort } = searchParamsCodec.decode(req.paramsJson);
        const input = {
          index,
          query,
          sort,
          ...(req.asOfVersion !== undefined ? { asOfVersion: req.asOfVersion } : {}),
        };
        const opts = {
          signal: ctx.signal,
          heavy: <T>(work: () => Promise<T>) => limiter.run(caller.userId, ctx.signal, work),
        };
        if (req.countOnly) return { rows: await exportSearch.count(caller, input, opts) };
        const format = FORMATS.find((f) => f === req.format);
        if (!format) throw AppError.invalid(`format: not a search export format`);
        if (!path.isAbsolute(req.path) || path.dirname(path.normalize(req.path)) !== exportDir)
          throw AppError.invalid(
            "path: not a file of this query service's exports folder (QUARRY_EXPORT_DIR must name the same volume, at the same path, on the gateway and the query service)",
          );
        // Not under the heavy-call cap: an export may run for minutes, and the gateway already lets each user
        // run only a few at a time.
        return { rows: await exportSearch.write(caller, input, format, req.path, { signal: ctx.signal }) };
      },
    ),
  };
}
