import { randomUUID } from 'node:crypto';
import { AppError } from '@quarry/errors';
import type { AuthenticateUseCase } from './authenticate.use-case';
import type { DispatchMethodUseCase } from './dispatch-method.use-case';
import type { Principal } from './principal';
import type { LinkedFile } from './signed-links';

const NO_LONGER = "This link no longer opens: its schedule's owner may no longer read the report it delivered";

/**
 * Whether a delivery's signed link may still be opened: its signature is the link's own credential, but
 * like an embed token it only opens while whoever it was made for still could. Each time it is opened, the
 * schedule's API token must still be accepted (not revoked or expired, its owner neither disabled nor
 * removed) and still read the report (it exists, is shared with the owner, the token holds reports:read).
 */
export class OpenSignedLinkUseCase {
  constructor(
    private readonly authenticate: AuthenticateUseCase,
    private readonly dispatch: DispatchMethodUseCase,
  ) {}

  /** Resolves when the link still opens; otherwise a 403 saying why (a failure to ask is its own error). */
  async check(file: LinkedFile): Promise<void> {
    let owner: Principal;
    try {
      owner = await this.authenticate.fromTokenId(file.tokenId);
    } catch (err) {
      if (err instanceof AppError && (err.code === 'UNAUTHENTICATED' || err.code === 'FORBIDDEN'))
        throw AppError.forbidden(NO_LONGER);
      throw err;
    }
    let index: string;
    try {
      const { data } = await this.dispatch.call(
        owner,
        'REPORTS.METADATA',
        { guid: file.guid },
        { requestId: `link-${randomUUID()}` },
      );
      index = (data as { index: string }).index;
    } catch (err) {
      if (err instanceof AppError && (err.code === 'NOT_FOUND' || err.code === 'FORBIDDEN'))
        throw AppError.forbidden(NO_LONGER);
      throw err;
    }
    // An owner always sees the metadata of their own reports; the file holds the index's records, which the
    // owner must still be allowed to read.
    const { admin, indexes } = owner.user;
    if (!admin && !indexes.includes('*') && !indexes.includes(index)) throw AppError.forbidden(NO_LONGER);
  }
}
