import { AppError, isAppError, quoteInput, quoteList } from '@quarry/errors';
import type { Realm } from '@quarry/metadata-store';
import { checkQuerySyntax } from '@quarry/query-language';
import { INDEX_NAME } from '@quarry/contract';

export interface RealmGrant {
  /** The indexes the user is given ("*": all). */
  indexes: readonly string[];
  admin: boolean;
}

/**
 * `--realm INDEX=QUERY` values of `quarry user create`, checked before anything is stored. A realm is a
 * security rule, so every doubt is a refusal: a blank query would read as "no restriction", a query
 * that does not parse would fail every search later (or worse, be mistaken for none), and a realm on an
 * index the user is not given, or on an admin, would never apply while looking as if it did.
 * Field names are not checked: the index may be loaded after the user is created.
 */
export function parseRealms(values: readonly string[], grant: RealmGrant): Realm[] {
  if (values.length > 0 && grant.admin)
    throw AppError.invalid(
      '--realm has no effect on an admin, who sees every row of every index; drop --admin or the realm',
    );
  return values.map((text) => {
    const at = text.indexOf('=');
    if (at < 0) throw AppError.invalid(`--realm must be INDEX=QUERY, got ${quoteInput(text)}`);
    const index = text.slice(0, at).trim();
    const query = text.slice(at + 1).trim();
    if (!INDEX_NAME.test(index))
      throw AppError.invalid(`--realm must be INDEX=QUERY with an index name before "=", got ${quoteInput(text)}`);
    if (!grant.indexes.includes('*') && !grant.indexes.includes(index)) {
      const given = grant.indexes.length ? `only ${quoteList(grant.indexes)}` : 'no index';
      throw AppError.invalid(
        `--realm names index ${quoteInput(index)}, which the user is not given (--indexes gives ${given})`,
      );
    }
    if (query === '')
      throw AppError.invalid(
        `--realm for index ${quoteInput(index)} has a blank query; a realm must say which rows the user may see`,
      );
    try {
      checkQuerySyntax(query);
    } catch (err) {
      if (isAppError(err)) throw AppError.invalid(`--realm for index ${quoteInput(index)}: ${err.detail}`);
      throw err;
    }
    return { index, query };
  });
}
