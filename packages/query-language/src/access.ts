import type { Caller } from '@quarry/contract';
import { AppError } from '@quarry/errors';
import { checkQuerySyntax, parseQuery, type ParseOptions } from './parse-query';
import { and, or, type QueryNode } from './query-node';

/** The part of the caller that decides what it may read. */
export type Reader = Pick<Caller, 'admin' | 'indexes' | 'realms' | 'narrowing'>;

export function mayRead(reader: Reader, index: string): boolean {
  return reader.admin || reader.indexes.includes('*') || reader.indexes.includes(index);
}

/** Whether the reader sees only part of the index (realms, or a narrowing such as an embed token's realm). */
export function isRestricted(reader: Reader, index: string): boolean {
  return (
    (!reader.admin && reader.realms.some((r) => r.index === index)) ||
    (reader.narrowing ?? []).some((r) => r.index === index)
  );
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
  return restrictedTree(reader, index, parseQuery(query, opts), opts);
}

/** restrictedQuery of a query already parsed (a ranked search scores the caller's own tree). */
export function restrictedTree(reader: Reader, index: string, user: QueryNode, opts: ParseOptions): QueryNode {
  return narrowed(reader, index, realmRestricted(reader, index, user, opts), opts);
}

/** The narrowing queries of this index (an embed token's realm) ANDed around the tree, for admins too. */
function narrowed(reader: Reader, index: string, tree: QueryNode, opts: ParseOptions): QueryNode {
  const narrowing = (reader.narrowing ?? []).filter((r) => r.index === index);
  if (narrowing.length === 0) return tree;
  let parsed: QueryNode[];
  try {
    parsed = narrowing.map((r) => {
      checkQuerySyntax(r.query);
      return parseQuery(r.query, opts);
    });
  } catch {
    // Fail closed, as for realms: a narrowing that cannot be applied must not let everything through.
    throw AppError.forbidden(`This token's realm for index "${index}" no longer matches its fields`);
  }
  return and(...parsed, tree);
}

function realmRestricted(reader: Reader, index: string, user: QueryNode, opts: ParseOptions): QueryNode {
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
