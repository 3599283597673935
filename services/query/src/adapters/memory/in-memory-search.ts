import {
  hasFuzzy,
  resolveFuzzy,
  scoreClauses,
  scoreKey,
  scoreRecord,
  type QueryNode,
  type TermCounts,
} from '@quarry/query-language';
import type { SearchPage, SearchPlan } from '../../ports/search-index.port';
import { compilePredicate, lowerBound, UnsupportedQuery, type Predicate } from './compile-predicate';
import type { InMemoryTable, WordIndex } from './in-memory-table';

type Compare = (a: number, b: number) => number;

/**
 * The SQL path's ORDER BY: each key by its DuckDB rank (missing values last in both directions), then
 * the record order.
 */
function comparator(table: InMemoryTable, plan: SearchPlan, scores: ScoreOf): Compare {
  const keys = plan.sort.map((s) => ({
    rank: s.type === 'score' ? null : table.rank(s.field),
    desc: s.direction === 'desc',
  }));
  return (a, b) => {
    for (const { rank, desc } of keys) {
      if (rank === null) {
        const d = scoreKey(scores(a)) - scoreKey(scores(b));
        if (d !== 0) return desc ? -d : d;
        continue;
      }
      const ra = rank[a];
      const rb = rank[b];
      if (ra === rb) continue;
      if (ra === -1) return 1;
      if (rb === -1) return -1;
      return desc ? rb - ra : ra - rb;
    }
    return a - b;
  };
}

/**
 * The first `k` rows of `rows` in `compare` order, sorted: a bounded max-heap, so a page of 20 out of
 * 100,000 matches costs n·log k comparisons, not a full sort.
 */
function firstK(rows: Int32Array, k: number, compare: Compare): number[] {
  // A count alone (limit 0) wants no row: the heap below would keep one.
  if (k <= 0) return [];
  if (k >= rows.length / 4) return Array.from(rows).sort(compare).slice(0, k);
  const heap: number[] = [];
  const down = (i: number) => {
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let top = i;
      if (l < heap.length && compare(heap[l], heap[top]) > 0) top = l;
      if (r < heap.length && compare(heap[r], heap[top]) > 0) top = r;
      if (top === i) return;
      [heap[i], heap[top]] = [heap[top], heap[i]];
      i = top;
    }
  };
  for (const row of rows) {
    if (heap.length < k) {
      heap.push(row);
      for (let i = heap.length - 1; i > 0;) {
        const parent = (i - 1) >> 1;
        if (compare(heap[i], heap[parent]) <= 0) break;
        [heap[i], heap[parent]] = [heap[parent], heap[i]];
        i = parent;
      }
    } else if (compare(row, heap[0]) < 0) {
      heap[0] = row;
      down(0);
    }
  }
  return heap.sort(compare);
}

type ScoreOf = (row: number) => number;

/** The fields a plan reads: those its query tests and those it sorts by. */
export function fieldsOf(plan: SearchPlan): Set<string> {
  const fields = new Set(plan.sort.filter((s) => s.type !== 'score').map((s) => s.field));
  const walk = (q: QueryNode): void => {
    switch (q.kind) {
      case 'and':
      case 'or':
        q.children.forEach(walk);
        return;
      case 'not':
        walk(q.child);
        return;
      case 'match':
        q.fields.forEach((f) => fields.add(f));
        return;
      case 'compare':
      case 'exists':
      case 'equals':
      case 'datePart':
        fields.add(q.field);
        return;
      default:
        return;
    }
  };
  walk(plan.where);
  if (plan.score) walk(plan.score);
  return fields;
}

/** The held version's counts, from its word indexes: the same numbers the SQL path's terms give. */
function heldCounts(table: InMemoryTable): TermCounts {
  const index = (field: string): WordIndex => {
    const found = table.wordIndex(field);
    if (!found) throw new UnsupportedQuery('a word match on a non-text column');
    return found;
  };
  return {
    field: (name) => {
      const i = index(name);
      return { docs: i.docs, words: i.totalWords };
    },
    df: (field, word) => {
      const i = index(field);
      const at = lowerBound(i.vocabulary, word);
      return i.vocabulary[at] === word ? i.rows[at].length : 0;
    },
  };
}

function heldVocabulary(table: InMemoryTable): (fields: readonly string[]) => Iterable<string> {
  return (fields) => {
    const set = new Set<string>();
    for (const f of fields) for (const w of table.wordIndex(f)?.vocabulary ?? []) set.add(w);
    return set;
  };
}

/**
 * The scores of the records a search matched, computed once each: the words of each field a clause
 * reads are split from the held words column as the SQL path counts them.
 */
function scorer(table: InMemoryTable, score: QueryNode, work: { left: number }): ScoreOf {
  const clauses = scoreClauses(score, heldCounts(table));
  const constants = new Map<number, Predicate>();
  clauses.forEach((c, i) => {
    if (c.kind === 'constant') constants.set(i, compilePredicate(c.leaf, table, work));
  });
  const words = new Map<string, ReadonlyArray<string | null>>();
  for (const c of clauses)
    if (c.kind === 'text') for (const p of c.parts) words.set(p.field, table.wordIndex(p.field)?.words ?? []);
  const known = new Map<number, number>();
  return (row) => {
    let s = known.get(row);
    if (s === undefined) {
      s = scoreRecord(
        clauses,
        (field) => {
          const text = words.get(field)?.[row];
          return text === null || text === undefined ? null : text.split(' ').filter((w) => w !== '');
        },
        (i) => constants.get(i)?.(row) ?? false,
      );
      known.set(row, s);
    }
    return s;
  };
}

/** Leaf tests a search runs: a scan costs about this many closure calls per record. */
export function leafCount(q: QueryNode): number {
  switch (q.kind) {
    case 'and':
    case 'or':
      return q.children.reduce((n, c) => n + leafCount(c), 0);
    case 'not':
      return leafCount(q.child);
    default:
      return 1;
  }
}

/**
 * A search over an in-memory table: the same total and page, in the same JSON, as the SQL path. Throws
 * UnsupportedQuery when it would take more than `maxWork` units (the scan, and the word matches).
 */
export function searchInMemory(table: InMemoryTable, plan: SearchPlan, maxWork = Infinity): Omit<SearchPage, 'engine'> {
  const scan = leafCount(plan.where) * table.size;
  if (scan > maxWork) throw new UnsupportedQuery('more leaf tests than one scan may run in memory');
  const work = { left: maxWork - scan };
  const vocabulary = heldVocabulary(table);
  const where = hasFuzzy(plan.where) ? resolveFuzzy(plan.where, vocabulary) : plan.where;
  const test = compilePredicate(where, table, work);
  const end = plan.offset + plan.limit;
  const { records } = table;
  if (plan.score) {
    const resolved = resolveFuzzy(plan.score, vocabulary);
    const scores = scorer(table, resolved, work);
    const hits = new Int32Array(table.size);
    let total = 0;
    for (let row = 0; row < table.size; row++) if (test(row)) hits[total++] = row;
    // Scoring reads each match's words once: about one unit per match and clause.
    const perMatch = 1 + (plan.score.kind === 'and' || plan.score.kind === 'or' ? plan.score.children.length : 1);
    if (total * perMatch > work.left) throw new UnsupportedQuery('more matches to score than one search may in memory');
    const rows =
      plan.offset >= total
        ? []
        : firstK(hits.subarray(0, total), end, comparator(table, plan, scores)).slice(plan.offset);
    return {
      total,
      recordsJson: `[${rows.map((r) => records[r]).join(',')}]`,
      scores: rows.map(scores),
      resolved,
    };
  }
  if (plan.sort.length === 0) {
    // Record order: the page is the matches from offset on, the rest only counted.
    const page: string[] = [];
    let total = 0;
    for (let row = 0; row < table.size; row++) {
      if (!test(row)) continue;
      if (total >= plan.offset && total < end) page.push(records[row]);
      total++;
    }
    return { total, recordsJson: `[${page.join(',')}]` };
  }
  const hits = new Int32Array(table.size);
  let total = 0;
  for (let row = 0; row < table.size; row++) if (test(row)) hits[total++] = row;
  if (plan.offset >= total) return { total, recordsJson: '[]' };
  const rows = firstK(
    hits.subarray(0, total),
    end,
    comparator(table, plan, () => 0),
  ).slice(plan.offset);
  return { total, recordsJson: `[${rows.map((r) => records[r]).join(',')}]` };
}
