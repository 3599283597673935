import type { QueryNode } from '@quarry/query-language';
import type { SearchPage, SearchPlan } from '../../ports/search-index.port';
import { compilePredicate, UnsupportedQuery } from './compile-predicate';
import type { InMemoryTable } from './in-memory-table';

type Compare = (a: number, b: number) => number;

/**
 * The SQL path's ORDER BY: each key by its DuckDB rank (missing values last in both directions), then
 * the record order.
 */
function comparator(table: InMemoryTable, plan: SearchPlan): Compare {
  const keys = plan.sort.map((s) => ({ rank: table.rank(s.field), desc: s.direction === 'desc' }));
  return (a, b) => {
    for (const { rank, desc } of keys) {
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

/** The fields a plan reads: those its query tests and those it sorts by. */
export function fieldsOf(plan: SearchPlan): Set<string> {
  const fields = new Set(plan.sort.map((s) => s.field));
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
  return fields;
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
  const test = compilePredicate(plan.where, table, { left: maxWork - scan });
  const end = plan.offset + plan.limit;
  const { records } = table;
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
  const rows = firstK(hits.subarray(0, total), end, comparator(table, plan)).slice(plan.offset);
  return { total, recordsJson: `[${rows.map((r) => records[r]).join(',')}]` };
}
