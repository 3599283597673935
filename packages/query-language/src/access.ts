import type { Caller } from '@quarry/contract';
import { AppError } from '@quarry/errors';
import { checkQuerySyntax, parseQuery, type ParseOptions } from './parse-query';
import { and, or, type QueryNode } from './query-node';

/** The part of the caller that decides what it may read. */
export type Reader = Pick<Caller, 'admin' | 'indexes' | 'realms'>;

export function mayRead(reader: Reader, index: string): boolean {
  return reader.admin || reader.indexes.includes('*') || reader.indexes.includes(index);
}

/** Unknown and unreadable indexes look the same from outside: existence is not leaked. */
export function indexNotFound(index: string): AppError {
  return AppError.notFound(`Index "${index}" not found`);
}

/**
 * The caller's query with its realms for this index ANDed around it (several realms ORed). The realm
 * is applied to the compiled tree, never to text, so nothing in `query` can escape it.
 */
export function restrictedQuery(reader: Reader, index: string, query: string, opts: ParseOptions): QueryNode {
  const user = parseQuery(query, opts);
  if (reader.admin) return user;
  const realms = reader.realms.filter((r) => r.index === index);
  if (realms.length === 0) return user;
  let realm: QueryNode;
  try {
    realm = or(
      ...realms.map((r) => {
        // A blank realm would parse as "everything" and, ORed, cancel the real ones: it is refused at
        // `user create`, and one stored before that rule counts as unusable (fail closed).
        checkQuerySyntax(r.query);
        return parseQuery(r.query, opts);
      }),
    );
  } catch {
    // Fail closed: a realm that no longer fits the index must not widen access.
    throw AppError.forbidden(`Your access rules for index "${index}" no longer match its fields; ask an administrator`);
  }
  return and(realm, user);
}
