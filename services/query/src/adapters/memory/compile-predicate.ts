import type { CompareOp, Literal, QueryNode } from '@quarry/query-language';
import { unpairedSurrogateAt } from '@quarry/errors';
import { integerBound } from '@quarry/snapshots';
import { compareCodePoints } from './compare-code-points';
import { isMissing, type InMemoryTable, type MemoryColumn, type WordIndex } from './in-memory-table';

/** True when record `row` matches. */
export type Predicate = (row: number) => boolean;

/**
 * A query the in-memory path cannot answer as the SQL path would (a leaf on a field of another type), or
 * not within the work one search may do on the thread that serves every other call.
 */
export class UnsupportedQuery extends Error {}

/**
 * Units of work a search may still spend before it goes to SQL (which runs off the thread and stops at
 * the deadline). A unit is about one predicate call on one record.
 */
export interface WorkBudget {
  left: number;
}

function charge(work: WorkBudget, units: number): void {
  work.left -= units;
  if (work.left < 0) throw new UnsupportedQuery('more work than one search may do in memory');
}

/** DuckDB reads a U+FFFD for an unpaired surrogate, JS compares the unit itself. */
function wellFormed(text: string): string {
  if (unpairedSurrogateAt(text) >= 0) throw new UnsupportedQuery('text with an unpaired surrogate');
  return text;
}

const NEVER: Predicate = () => false;
const ALWAYS: Predicate = () => true;

/** The sign of a comparison result to the outcome of each operator. */
function holds(op: CompareOp, sign: number): boolean {
  switch (op) {
    case 'eq':
      return sign === 0;
    case 'gt':
      return sign > 0;
    case 'gte':
      return sign >= 0;
    case 'lt':
      return sign < 0;
    case 'lte':
      return sign <= 0;
  }
}

/**
 * Same outcome as compileWhere's comparison (compile-duckdb.ts): whole numbers against integer
 * columns, DOUBLE semantics otherwise, text by DuckDB's lower() in byte order.
 */
function compareLeaf(column: MemoryColumn, fieldType: string, op: CompareOp, lit: Literal): Predicate {
  if (lit.type === 'string') {
    if (column.kind !== 'text') throw new UnsupportedQuery('text compared with a non-text column');
    const { lower } = column;
    const v = wellFormed(lit.value);
    if (op === 'eq') return (row) => lower[row] === v;
    return (row) => {
      const x = lower[row];
      return x !== null && holds(op, compareCodePoints(x, v));
    };
  }
  if (lit.type === 'number') {
    if (column.kind === 'integer') {
      const { values } = column;
      const bound = fieldType === 'integer' ? integerBound(op, lit.value) : undefined;
      if (bound === null) return NEVER;
      if (bound !== undefined) {
        // JS compares a bigint with a number exactly, as DuckDB compares BIGINT with BIGINT.
        return (row) => {
          const x = values[row];
          return x !== null && holds(op, x < bound ? -1 : x > bound ? 1 : 0);
        };
      }
      // BIGINT against DOUBLE: DuckDB turns the integer into a double first.
      const v = lit.value;
      return (row) => {
        const x = values[row];
        if (x === null) return false;
        const d = Number(x);
        return holds(op, d < v ? -1 : d > v ? 1 : 0);
      };
    }
    if (column.kind !== 'number') throw new UnsupportedQuery('number compared with a non-numeric column');
    const { values } = column;
    const v = lit.value;
    return (row) => {
      const x = values[row];
      // Never NaN: a snapshot stores NaN and the infinities as missing (build-snapshot).
      if (x === null) return false;
      return holds(op, x < v ? -1 : x > v ? 1 : 0);
    };
  }
  if (lit.type === 'boolean') {
    if (column.kind !== 'boolean') throw new UnsupportedQuery('boolean compared with a non-boolean column');
    const { values } = column;
    const v = lit.value ? 1 : 0;
    return (row) => {
      const x = values[row];
      return x !== null && holds(op, (x ? 1 : 0) - v);
    };
  }
  if (column.kind !== 'date') throw new UnsupportedQuery('date compared with a non-date column');
  const { ms, subMs } = column;
  // The SQL path binds the literal as milliseconds (Date's own truncation).
  const v = Math.trunc(lit.value);
  return (row) => {
    const x = ms[row];
    if (x === null) return false;
    return holds(op, x !== v ? x - v : subMs[row]);
  };
}

/** The first vocabulary entry not below `word`. */
export function lowerBound(vocabulary: readonly string[], word: string): number {
  let lo = 0;
  let hi = vocabulary.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (vocabulary[mid] < word) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The records holding `word`, or (as a prefix) any word it starts. */
function rowsOf(index: WordIndex, word: string, prefix: boolean): Int32Array[] {
  const { vocabulary, rows } = index;
  const out: Int32Array[] = [];
  for (let i = lowerBound(vocabulary, word); i < vocabulary.length; i++) {
    if (vocabulary[i] === word) out.push(rows[i]);
    else if (prefix && vocabulary[i].startsWith(word)) out.push(rows[i]);
    else break;
    if (!prefix) break;
  }
  return out;
}

/**
 * Marks the records whose words column holds ` w1 w2 … wn ` (or ` w1 … wn` as a prefix), as the SQL
 * path's contains(): one word is a lookup or a vocabulary range; several are the records holding the
 * rarest full word, each then checked with the same substring test. Charged before it is done: a
 * prefix can name most of the vocabulary, and a phrase of common words reads most of the text.
 */
function markMatches(
  index: WordIndex,
  words: readonly string[],
  prefix: boolean,
  hits: Uint8Array,
  work: WorkBudget,
): void {
  if (words.length === 1) {
    const matching = rowsOf(index, words[0], prefix);
    charge(
      work,
      matching.reduce((n, rows) => n + 1 + rows.length, 0),
    );
    for (const rows of matching) for (const row of rows) hits[row] = 1;
    return;
  }
  const full = prefix ? words.slice(0, -1) : words;
  let rarest: Int32Array | undefined;
  for (const w of full) {
    const [rows] = rowsOf(index, w, false);
    if (!rows) return;
    if (!rarest || rows.length < rarest.length) rarest = rows;
  }
  if (!rarest) return;
  // A substring test reads the record's words column, about 16 characters per unit.
  charge(work, rarest.length * (1 + index.meanChars / 16));
  const needle = ` ${words.join(' ')}${prefix ? '' : ' '}`;
  for (const row of rarest) {
    if (index.words[row]?.includes(needle)) hits[row] = 1;
  }
}

/**
 * Compiles a QueryNode to a test over an in-memory table that holds exactly where compileWhere's SQL
 * is TRUE. A missing value never matches a leaf and NOT of such a leaf matches, as there: SQL's NULL
 * only ever reaches WHERE or a NOT that turns it into FALSE first, so false serves for it here.
 * Throws UnsupportedQuery where it could not promise that (the caller then runs the SQL).
 */
export function compilePredicate(
  node: QueryNode,
  table: InMemoryTable,
  work: WorkBudget = { left: Infinity },
): Predicate {
  const column = (field: string): MemoryColumn => {
    const c = table.column(field);
    if (!c) throw new UnsupportedQuery(`the column ${field} is not held`);
    return c;
  };

  const walk = (q: QueryNode): Predicate => {
    switch (q.kind) {
      case 'all':
        return ALWAYS;
      case 'none':
        return NEVER;
      case 'and': {
        const parts = q.children.map(walk);
        if (parts.length === 2) {
          const [a, b] = parts;
          return (row) => a(row) && b(row);
        }
        return (row) => parts.every((p) => p(row));
      }
      case 'or': {
        const parts = q.children.map(walk);
        if (parts.length === 2) {
          const [a, b] = parts;
          return (row) => a(row) || b(row);
        }
        return (row) => parts.some((p) => p(row));
      }
      case 'not': {
        const child = walk(q.child);
        return (row) => !child(row);
      }
      case 'match': {
        q.words.forEach(wellFormed);
        const hits = new Uint8Array(table.size);
        if (q.fuzzy !== undefined) {
          // Resolved before it gets here (resolveFuzzy): the records holding any expansion as a word.
          for (const f of q.fields) {
            const index = table.wordIndex(f);
            if (!index) throw new UnsupportedQuery('a word match on a non-text column');
            for (const w of q.expansions ?? []) markMatches(index, [w], false, hits, work);
          }
          return (row) => hits[row] === 1;
        }
        for (const f of q.fields) {
          const index = table.wordIndex(f);
          if (!index) throw new UnsupportedQuery('a word match on a non-text column');
          markMatches(index, q.words, q.prefix, hits, work);
        }
        return (row) => hits[row] === 1;
      }
      case 'compare':
        return compareLeaf(column(q.field), q.fieldType, q.op, q.value);
      case 'equals':
        // Memory holds text lower-cased: the exact value is SQL's to test.
        throw new UnsupportedQuery('exact text');
      case 'datePart':
        // Wall clocks in a zone are DuckDB's to compute (the same functions the crosstab groups by).
        throw new UnsupportedQuery('a date part');
      case 'exists': {
        const c = column(q.field);
        if (q.fieldType === 'string') {
          if (c.kind !== 'text') throw new UnsupportedQuery('a text test on a non-text column');
          // `value <> ''`: lower() keeps a value empty exactly when it was.
          const { lower } = c;
          return (row) => {
            const x = lower[row];
            return x !== null && x !== '';
          };
        }
        return (row) => !isMissing(c, row);
      }
    }
  };

  return walk(node);
}
