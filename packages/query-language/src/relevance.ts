import type { QueryLeaf, QueryNode } from './query-node';

/*
 * Relevance as docs/search.md "Ranking, highlights and facets" states it: BM25 as Robertson wrote it, computed
 * exactly from counts over the whole version. Every engine that ranks (the SQL path, the in-memory path)
 * builds the same ScoreClauses from the same counts and adds them up in the same order, so their scores
 * agree to the last bit and their orders exactly.
 */

export const BM25_K1 = 1.2;
export const BM25_B = 0.75;
/** A fuzzy word's expansions at most, nearest first (Lucene's maxExpansions). */
export const MAX_FUZZY_EXPANSIONS = 50;
/**
 * Scores are compared after rounding to this many decimals: two records whose scores are equal as
 * numbers but were summed from different terms may differ in the last bit, and ties keep load order.
 */
export const SCORE_DECIMALS = 9;
export const SCORE_SCALE = 10 ** SCORE_DECIMALS;

/** What the version holds of a text field: the counts BM25 reads. */
export interface FieldTermCounts {
  /** Records whose field has at least one word (N). */
  docs: number;
  /** Their words in all (avglen = words / docs). */
  words: number;
}

/** Counts over one version, before realms and filters (as Lucene's). */
export interface TermCounts {
  field(name: string): FieldTermCounts | undefined;
  /** Records whose field holds the word (n). */
  df(field: string, word: string): number;
}

export function idf(docs: number, withTerm: number): number {
  return Math.log(1 + (docs - withTerm + 0.5) / (withTerm + 0.5));
}

/** One word (or phrase) in one record's field. */
export function bm25(idfValue: number, tf: number, len: number, avglen: number): number {
  return (idfValue * tf * (BM25_K1 + 1)) / (tf + BM25_K1 * (1 - BM25_B + (BM25_B * len) / avglen));
}

/** A word sequence in one field, with the constants its score reads. */
export interface TextPart {
  field: string;
  /** One word, or a phrase's words (its tf is its occurrences, counted left to right without overlap). */
  words: string[];
  idf: number;
  avglen: number;
}

export type ScoreClause =
  /** Adds boost × Σ bm25 over its parts (0 where no part occurs). */
  | { kind: 'text'; boost: number; parts: TextPart[] }
  /** Adds boost where the leaf holds: prefixes, ranges, `Field:*`, `:=`, date parts. */
  | { kind: 'constant'; boost: number; leaf: QueryLeaf };

/** The leaves a record's score adds up: every leaf not under a NOT, in query order. */
export function positiveLeaves(node: QueryNode): QueryLeaf[] {
  switch (node.kind) {
    case 'all':
    case 'none':
    case 'not':
      return [];
    case 'and':
    case 'or':
      return node.children.flatMap(positiveLeaves);
    default:
      return [node];
  }
}

/** Words, phrases and fuzzy words outside any NOT: what makes a search rank by relevance. */
export function hasScoringClauses(node: QueryNode): boolean {
  return positiveLeaves(node).some((l) => l.kind === 'match' && !l.prefix);
}

/**
 * The clauses of a (fuzzy-resolved) query with the constants each reads from the version's counts. A
 * field no record has words in scores nothing (its avglen is undefined), and neither does an expansion
 * list that is empty.
 */
export function scoreClauses(node: QueryNode, counts: TermCounts): ScoreClause[] {
  const out: ScoreClause[] = [];
  for (const leaf of positiveLeaves(node)) {
    const boost = leaf.boost ?? 1;
    if (leaf.kind !== 'match' || leaf.prefix) {
      out.push({ kind: 'constant', boost, leaf });
      continue;
    }
    const sequences = leaf.fuzzy ? (leaf.expansions ?? []).map((w) => [w]) : [leaf.words];
    const parts: TextPart[] = [];
    for (const words of sequences)
      for (const field of leaf.fields) {
        const f = counts.field(field);
        if (!f || f.docs === 0) continue;
        const sum = words.reduce((s, w) => s + idf(f.docs, counts.df(field, w)), 0);
        parts.push({ field, words, idf: sum, avglen: f.words / f.docs });
      }
    out.push({ kind: 'text', boost, parts });
  }
  return out;
}

/** Occurrences of `seq` in `tokens`, left to right without overlap (what a phrase's tf is). */
export function occurrences(tokens: readonly string[], seq: readonly string[]): number {
  let n = 0;
  for (let i = 0; i + seq.length <= tokens.length;) {
    let k = 0;
    while (k < seq.length && tokens[i + k] === seq[k]) k++;
    if (k === seq.length) {
      n++;
      i += seq.length;
    } else i++;
  }
  return n;
}

/** A score as it is ordered: rounded to SCORE_DECIMALS. */
export function scoreKey(score: number): number {
  return Math.round(score * SCORE_SCALE);
}

/**
 * Damerau–Levenshtein distance in its optimal-string-alignment form (adjacent transpositions, each
 * substring edited once: what Lucene's fuzzy automata accept), over code points. Gives up past `max`,
 * answering max + 1, so a long word costs a bounded band of the table, never its whole.
 */
export function editDistance(a: string, b: string, max: number): number {
  const s = codePoints(a);
  const t = codePoints(b);
  if (Math.abs(s.length - t.length) > max) return max + 1;
  const m = s.length;
  const n = t.length;
  let prev2 = new Array<number>(n + 1).fill(0);
  let prev = Array.from({ length: n + 1 }, (_, j) => j);
  let cur = new Array<number>(n + 1).fill(0);
  for (let i = 1; i <= m; i++) {
    cur[0] = i;
    let best = cur[0];
    for (let j = 1; j <= n; j++) {
      const cost = s[i - 1] === t[j - 1] ? 0 : 1;
      let d = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost);
      if (i > 1 && j > 1 && s[i - 1] === t[j - 2] && s[i - 2] === t[j - 1]) d = Math.min(d, prev2[j - 2] + 1);
      cur[j] = d;
      if (d < best) best = d;
    }
    if (best > max) return max + 1;
    [prev2, prev, cur] = [prev, cur, prev2];
  }
  return Math.min(prev[n], max + 1);
}

const SURROGATE = /[\uD800-\uDFFF]/;

/** Indexable by code point: the string itself when it has no surrogate pair (most words). */
function codePoints(text: string): ArrayLike<string> {
  return SURROGATE.test(text) ? Array.from(text) : text;
}

/** Code-point order, the order DuckDB sorts text in (UTF-8 bytes). */
function byCodePoint(a: string, b: string): number {
  const x = Array.from(a);
  const y = Array.from(b);
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const d = (x[i].codePointAt(0) ?? 0) - (y[i].codePointAt(0) ?? 0);
    if (d !== 0) return d;
  }
  return x.length - y.length;
}

/**
 * The words of `vocabulary` within `edits` of `word`: nearest first, then in code-point order, at most
 * MAX_FUZZY_EXPANSIONS. The word itself, when a record holds it, is the first.
 */
export function fuzzyExpansions(vocabulary: Iterable<string>, word: string, edits: number): string[] {
  const found: Array<{ w: string; d: number }> = [];
  const length = codePoints(word).length;
  for (const w of vocabulary) {
    // The cheap test first (a code point is one or two UTF-16 units): a word more than `edits` code
    // points longer or shorter cannot be that near.
    if (w.length > 2 * (length + edits) || w.length < length - edits) continue;
    const d = editDistance(word, w, edits);
    if (d <= edits) found.push({ w, d });
  }
  found.sort((a, b) => a.d - b.d || byCodePoint(a.w, b.w));
  return found.slice(0, MAX_FUZZY_EXPANSIONS).map((f) => f.w);
}

/** The query with every fuzzy word's expansions filled in from `vocabulary` (of the fields it tests). */
export function resolveFuzzy(node: QueryNode, vocabulary: (fields: readonly string[]) => Iterable<string>): QueryNode {
  switch (node.kind) {
    case 'and':
    case 'or':
      return { kind: node.kind, children: node.children.map((c) => resolveFuzzy(c, vocabulary)) };
    case 'not':
      return { kind: 'not', child: resolveFuzzy(node.child, vocabulary) };
    case 'match':
      if (!node.fuzzy || node.expansions) return node;
      return { ...node, expansions: fuzzyExpansions(vocabulary(node.fields), node.words[0], node.fuzzy) };
    default:
      return node;
  }
}

/** Whether the query holds a fuzzy word (its engine must resolve it before matching). */
export function hasFuzzy(node: QueryNode): boolean {
  switch (node.kind) {
    case 'and':
    case 'or':
      return node.children.some(hasFuzzy);
    case 'not':
      return hasFuzzy(node.child);
    case 'match':
      return node.fuzzy !== undefined;
    default:
      return false;
  }
}

/**
 * One record's score: each clause's boost times the sum of its parts' BM25, added in clause order (the
 * SQL path's compileSearch writes the very same sums). `tokens` gives the record's words in a field
 * (null when it has none), `holds` whether a constant clause's leaf holds for it.
 */
export function scoreRecord(
  clauses: readonly ScoreClause[],
  tokens: (field: string) => readonly string[] | null,
  holds: (clause: number) => boolean,
): number {
  let total = 0;
  clauses.forEach((c, i) => {
    if (c.kind === 'constant') {
      if (holds(i)) total += c.boost;
      return;
    }
    if (c.parts.length === 0) return;
    let inner = 0;
    c.parts.forEach((p, k) => {
      const t = tokens(p.field);
      const value = t === null ? 0 : bm25(p.idf, occurrences(t, p.words), t.length, p.avglen);
      inner = k === 0 ? value : inner + value;
    });
    total += c.boost * inner;
  });
  return total;
}
