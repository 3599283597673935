import type { RequestHandler } from 'express';
import { linkedContentType } from '../domain/delivery-outputs';
import { AppError } from '@quarry/errors';
import type { OpenSignedLinkUseCase } from '../domain/open-signed-link.use-case';
import type { SignedLinks } from '../domain/signed-links';
import type { DeliveryFiles } from '../ports/delivery-files.port';
import type { RateLimiter } from '../ports/rate-limiter.port';
import { refusedForAddress } from './address-limit';
import { sendHttpProblem, sendProblem } from './http-responses';

export interface SignedDownloadDeps {
  /** Absent: this gateway signs no links (no key, no exports folder); every link answers 404. */
  links: () => { links: SignedLinks; files: DeliveryFiles; opens: OpenSignedLinkUseCase } | undefined;
  /** Per client address, for links this deployment did not sign (guessing costs as a bad token does). */
  addressLimiter?: RateLimiter;
}

/**
 * GET /exports/signed/<token>: a delivery's file too large to attach, to whoever holds the link (no
 * bearer token: the link is the credential). A token this deployment did not sign, or one changed in any
 * way (another file's id, a later expiry, a moved signature), answers 404 like a file that never was; a
 * link past its expiry, or whose file is gone, answers 410; one whose schedule's owner may no longer read
 * the report (token revoked, owner disabled or removed, report deleted or unshared) answers 403.
 */
export function signedDownloadHandler(deps: SignedDownloadDeps): RequestHandler {
  return (req, res) => {
    void (async () => {
      const signing = deps.links();
      const checked = signing?.links.check(String(req.params.token ?? ''));
      if (!signing || !checked || checked.kind === 'invalid') {
        if (await refusedForAddress(deps.addressLimiter, req, res)) return;
        return sendHttpProblem(res, 404, 'Not Found', 'No such file');
      }
      if (checked.kind === 'expired') return sendHttpProblem(res, 410, 'Gone', 'The link has expired');
      try {
        await signing.opens.check(checked.file);
      } catch (err) {
        if (err instanceof AppError) return sendProblem(res, err);
        throw err;
      }
      const { id, ext, filename } = checked.file;
      const found = await signing.files.open(id, ext);
      if (!found) return sendHttpProblem(res, 410, 'Gone', 'The file is no longer kept');
      res.status(200);
      res.setHeader('Content-Type', linkedContentType(ext));
      res.setHeader('Content-Length', String(found.bytes));
      res.setHeader('Content-Disposition', `attachment; filename="${filename}"`);
      res.setHeader('Cache-Control', 'private, no-store');
      res.setHeader('Referrer-Policy', 'no-referrer');
      found.stream.on('error', () => res.destroy());
      found.stream.pipe(res);
    })().catch(() => {
      if (!res.headersSent) sendHttpProblem(res, 500, 'Internal Server Error', 'The download failed');
      else res.destroy();
    });
  };
}
