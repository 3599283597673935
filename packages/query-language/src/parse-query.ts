import { AppError } from '@quarry/errors';
import { QueryCompiler, type FieldLookup } from './query-compiler';
import { tokenizeQuery } from './query-lexer';
import type { QueryNode } from './query-node';
import { parseTokens, type QueryAst } from './query-parser';
import { querySyntaxError, scanQuery, trimmedQuery } from './query-scanner';
import { FieldResolver, type FieldDef } from './schema';

export { MAX_QUERY_DEPTH } from './query-scanner';

export interface ParseOptions {
  fields: readonly FieldDef[];
  /** The instant date tokens (NOW, TODAY-7DAYS) are relative to. */
  now: number;
}

/**
 * Scanner, lexer, parser: each linear in the length of the query, so no input can stall the thread.
 * Null stands for "everything" (empty, `*`, `*:*`).
 */
function parseText(query: string): QueryAst | null {
  const q = trimmedQuery(query);
  const body = query.slice(q.start, q.end);
  // Only spaces of any kind (no-break ones too) ask for nothing in particular, as an empty query does.
  if (body.trim() === '' || body === '*' || body === '*:*') return null;
  scanQuery(q);
  return parseTokens(tokenizeQuery(q), q.end);
}

/**
 * At most this many field tests per query, as Lucene's maxClauseCount: a bare word is one test per text
 * field, so `a OR a OR …` over a wide index multiplies fast, and every test is work on every record.
 */
export const MAX_QUERY_CLAUSES = 1024;

/** Field tests the engine will evaluate per record: a match over n fields counts n. */
export function countClauses(node: QueryNode): number {
  switch (node.kind) {
    case 'all':
    case 'none':
      return 0;
    case 'and':
    case 'or':
      return node.children.reduce((sum, c) => sum + countClauses(c), 0);
    case 'not':
      return countClauses(node.child);
    case 'match':
      return Math.max(node.fields.length, 1);
    case 'compare':
    case 'exists':
    case 'equals':
    case 'datePart':
      return 1;
  }
}

/** Compiles Lucene-style text into the engine-neutral QueryNode, checking fields and value types. */
export function parseQuery(query: string, opts: ParseOptions): QueryNode {
  const ast = parseText(query);
  if (ast === null) return { kind: 'all' };
  const node = new QueryCompiler(new FieldResolver(opts.fields), opts.now).compile(ast);
  const clauses = countClauses(node);
  if (clauses > MAX_QUERY_CLAUSES) {
    throw AppError.invalid(
      `The query from position 1 needs ${clauses} field tests (a bare word counts once per text field); at most ${MAX_QUERY_CLAUSES} are allowed. Name the fields to search, as in Title:word, or use fewer terms`,
    );
  }
  return node;
}

/**
 * Any field name stands for a text field: values are then checked only for what no field type accepts
 * (regular expressions, inner wildcards, nothing to search for), never for a type the field may not have.
 */
const ANY_FIELD: FieldLookup = {
  find: (name) => ({ name, type: 'string' }),
  textFields: () => [],
};

/**
 * The check for a query saved before the index it runs on is known (a user's realm): throws
 * AppError INVALID_ARGUMENT naming the position when the query is blank or malformed. Field names are not
 * resolved; the realm fails closed later if they do not fit the index.
 */
export function checkQuerySyntax(query: string): void {
  if (query.trim() === '') throw querySyntaxError(0, 'the query is blank');
  const ast = parseText(query);
  if (ast !== null) new QueryCompiler(ANY_FIELD, 0).compile(ast);
}
