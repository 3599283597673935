import { AppError } from '@quarry/errors';
import type { AuthenticateUseCase } from './authenticate.use-case';
import type { DispatchMethodUseCase } from './dispatch-method.use-case';
import { OpenSignedLinkUseCase } from './open-signed-link.use-case';
import type { Principal } from './principal';
import type { LinkedFile } from './signed-links';

const file: LinkedFile = {
  id: 'a'.repeat(32),
  ext: 'csv',
  filename: 'R.csv',
  expires: 2e9,
  tokenId: 'tok',
  guid: 'g-1',
};

const NO_LONGER = "This link no longer opens: its schedule's owner may no longer read the report it delivered";

function opener(owner: Partial<Principal['user']> | AppError, report: { index: string } | AppError) {
  const asked: string[] = [];
  const authenticate = {
    fromTokenId: async (id: string) => {
      asked.push(`token ${id}`);
      if (owner instanceof AppError) throw owner;
      return { user: { id: 'u', admin: false, indexes: [], ...owner }, scopes: new Set(['reports:read']) };
    },
  } as unknown as AuthenticateUseCase;
  const dispatch = {
    call: async (_p: Principal, method: string, params: { guid: string }) => {
      asked.push(`${method} ${params.guid}`);
      if (report instanceof AppError) throw report;
      return { data: report };
    },
  } as unknown as DispatchMethodUseCase;
  return { use: new OpenSignedLinkUseCase(authenticate, dispatch), asked };
}

describe('OpenSignedLinkUseCase', () => {
  it("opens while the schedule's token is accepted and its owner reads the report and its index", async () => {
    const { use, asked } = opener({ indexes: ['movies'] }, { index: 'movies' });
    await expect(use.check(file)).resolves.toBeUndefined();
    expect(asked).toEqual(['token tok', 'REPORTS.METADATA g-1']);
    await expect(opener({ indexes: ['*'] }, { index: 'movies' }).use.check(file)).resolves.toBeUndefined();
    await expect(opener({ admin: true }, { index: 'movies' }).use.check(file)).resolves.toBeUndefined();
  });

  it.each([
    [
      'the token revoked, expired or its owner disabled',
      new AppError('UNAUTHENTICATED', 'Token revoked'),
      { index: 'm' },
    ],
    ['the token left with no scope', new AppError('FORBIDDEN', 'no scope'), { index: 'm' }],
    ['the report deleted', { indexes: ['*'] }, AppError.notFound('Report g-1 not found')],
    ['the report no longer shared', { indexes: ['*'] }, AppError.forbidden('not shared')],
    ["the owner's own report on an index the owner no longer reads", { indexes: ['flights'] }, { index: 'movies' }],
  ] as Array<[string, Partial<Principal['user']> | AppError, { index: string } | AppError]>)(
    'refuses with 403 when %s',
    async (_, owner, report) => {
      await expect(opener(owner, report).use.check(file)).rejects.toMatchObject({
        code: 'FORBIDDEN',
        detail: NO_LONGER,
      });
    },
  );

  it('says a failure to ask for what it is (a service away), not a refusal', async () => {
    const away = AppError.unavailable('The reports service is unavailable; try again shortly');
    await expect(opener({ indexes: ['*'] }, away).use.check(file)).rejects.toBe(away);
  });
});
