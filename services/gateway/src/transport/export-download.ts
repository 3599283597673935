import type { RequestHandler } from 'express';
import { AppError } from '@quarry/errors';
import type { AuthenticateUseCase } from '../domain/authenticate.use-case';
import type { ExportStatusUseCase } from '../domain/export-status.use-case';
import { checkEmbedGrant, checkScopes } from '../domain/method-access';
import type { RateLimiter } from '../ports/rate-limiter.port';
import { refusedForAddress } from './address-limit';
import { sendHttpProblem, sendProblem } from './http-responses';

const CONTENT_TYPES: Record<string, string> = {
  csv: 'text/csv; charset=utf-8',
  jsonl: 'application/jsonl; charset=utf-8',
  parquet: 'application/vnd.apache.parquet',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  pdf: 'application/pdf',
};

/**
 * GET /exports/<id>: the file, streamed, to its creator's tokens only, and only to a token that may ask
 * EXPORTS.STATUS (the same scope check and the same refusal of embed tokens): a download reads what the
 * export read, so it may not ask less than the status does. Another user's id, a malformed one and an
 * unknown one answer the same 404; an expired file is a 410.
 */
export function exportDownloadHandler(deps: {
  authenticate: AuthenticateUseCase;
  exports: () => ExportStatusUseCase | undefined;
  /** Per client address, for requests without a valid token, as on /api/v1. */
  addressLimiter?: RateLimiter;
}): RequestHandler {
  return (req, res) => {
    void (async () => {
      const auth = await deps.authenticate.authenticate(req.headers.authorization);
      if (!auth.ok) {
        if (await refusedForAddress(deps.addressLimiter, req, res)) return;
        res.setHeader('WWW-Authenticate', 'Bearer realm="quarry"');
        return sendHttpProblem(res, 401, 'Unauthorized', 'A valid bearer token is required');
      }
      try {
        checkEmbedGrant(auth.principal, 'EXPORTS.STATUS', {});
        checkScopes(auth.principal, 'EXPORTS.STATUS', {});
      } catch (err) {
        if (err instanceof AppError) return sendProblem(res, err);
        throw err;
      }
      const exports = deps.exports();
      if (!exports) return sendHttpProblem(res, 503, 'Service Unavailable', 'Exports are not enabled on this gateway');
      const id = String(req.params.id ?? '');
      const found = await exports.file(auth.principal.user.id, id);
      if (found.kind === 'missing') return sendHttpProblem(res, 404, 'Not Found', 'No such export');
      if (found.kind === 'gone') return sendHttpProblem(res, 410, 'Gone', 'The export has expired; start it again');
      if (found.kind === 'not-ready')
        return sendHttpProblem(
          res,
          409,
          'Conflict',
          `The export is ${found.state}; ask EXPORTS.STATUS until it is done`,
        );
      res.status(200);
      res.setHeader('Content-Type', CONTENT_TYPES[found.record.format] ?? 'application/octet-stream');
      res.setHeader('Content-Length', String(found.record.bytes));
      res.setHeader('Content-Disposition', `attachment; filename="${found.fileName}"`);
      res.setHeader('Cache-Control', 'private, no-store');
      const stream = found.open();
      stream.on('error', () => res.destroy());
      stream.pipe(res);
    })().catch(() => {
      if (!res.headersSent) sendHttpProblem(res, 500, 'Internal Server Error', 'The download failed');
      else res.destroy();
    });
  };
}
