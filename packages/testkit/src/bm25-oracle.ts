/*
 * BM25 computed here, from the records as the test loaded them, by the formula docs/search.md states alone:
 * nothing of Quarry's (its parser, its words columns, its counts) is used, so an answer that agrees with
 * this one is right by the definition, not by sharing a mistake.
 */

export type Rec = Record<string, unknown>;

/** A clause as the test means it: words (a phrase when several) in some fields, or a filter worth 1. */
export type Clause =
  | { words: string[]; fields: string[]; boost?: number; fuzzy?: number; negate?: boolean }
  | { holds: (r: Rec) => boolean; boost?: number; negate?: boolean };

/** A query: clauses joined by AND or OR (a NOT clause never matches and never scores). */
export interface Spec {
  op: 'and' | 'or';
  clauses: Clause[];
}

const K1 = 1.2;
const B = 0.75;

/** A text field's words; a number in a text field is its JSON text, as the loader stores it. */
export function tokens(value: unknown): string[] {
  const text = typeof value === 'number' ? String(value) : value;
  if (typeof text !== 'string') return [];
  return [...text.toLowerCase().matchAll(/[\p{L}\p{N}]+/gu)].map((m) => m[0]);
}

/** Optimal string alignment distance over code points. */
export function osa(a: string, b: string): number {
  const s = [...a];
  const t = [...b];
  const d: number[][] = Array.from({ length: s.length + 1 }, (_, i) =>
    Array.from({ length: t.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= s.length; i++)
    for (let j = 1; j <= t.length; j++) {
      const cost = s[i - 1] === t[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && s[i - 1] === t[j - 2] && s[i - 2] === t[j - 1])
        d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[s.length][t.length];
}

const codePointOrder = (a: string, b: string) => {
  const x = [...a].map((c) => c.codePointAt(0) ?? 0);
  const y = [...b].map((c) => c.codePointAt(0) ?? 0);
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i] - y[i];
  return x.length - y.length;
};

/** The words of `fields` over every record within `edits` of `word`: nearest first, then by code point, 50 at most. */
export function expansions(records: Rec[], fields: string[], word: string, edits: number): string[] {
  const vocabulary = new Set<string>();
  for (const r of records) for (const f of fields) for (const w of tokens(r[f])) vocabulary.add(w);
  return [...vocabulary]
    .map((w) => ({ w, d: osa(word, w) }))
    .filter((x) => x.d <= edits)
    .sort((a, b) => a.d - b.d || codePointOrder(a.w, b.w))
    .slice(0, 50)
    .map((x) => x.w);
}

/** Non-overlapping occurrences of a word sequence, left to right. */
function occurrences(ts: string[], seq: string[]): number {
  let n = 0;
  for (let i = 0; i + seq.length <= ts.length;) {
    if (seq.every((w, k) => ts[i + k] === w)) {
      n++;
      i += seq.length;
    } else i++;
  }
  return n;
}

export interface Ranked {
  /** Record positions (load order) of every match, best first, ties in load order. */
  order: number[];
  scores: Map<number, number>;
}

/** Every match of the spec scored by BM25 over all `records` (the whole version), best first. */
export function rank(records: Rec[], spec: Spec, within: (r: Rec) => boolean = () => true): Ranked {
  const toks = new Map<string, string[][]>();
  const tokensOf = (f: string) => {
    let t = toks.get(f);
    if (!t) toks.set(f, (t = records.map((r) => tokens(r[f]))));
    return t;
  };
  const stats = (f: string) => {
    const t = tokensOf(f);
    const present = t.filter((x) => x.length > 0);
    return { N: present.length, avg: present.reduce((s, x) => s + x.length, 0) / present.length };
  };
  const idf = (f: string, w: string) => {
    const { N } = stats(f);
    const n = tokensOf(f).filter((x) => x.includes(w)).length;
    return Math.log(1 + (N - n + 0.5) / (n + 0.5));
  };
  // Per clause, per record: [matches, score].
  const perClause = spec.clauses.map((c) => {
    const seqs =
      'holds' in c ? [] : c.fuzzy ? expansions(records, c.fields, c.words[0], c.fuzzy).map((w) => [w]) : [c.words];
    return records.map((r, i): [boolean, number] => {
      if ('holds' in c) {
        const h = c.holds(r);
        return [c.negate ? !h : h, !c.negate && h ? (c.boost ?? 1) : 0];
      }
      let score = 0;
      let tf = 0;
      for (const seq of seqs)
        for (const f of c.fields) {
          const t = tokensOf(f)[i];
          const n = occurrences(t, seq);
          tf += n;
          if (n === 0) continue;
          const { N, avg } = stats(f);
          if (N === 0) continue;
          const i_ = seq.reduce((s, w) => s + idf(f, w), 0);
          score += (i_ * n * (K1 + 1)) / (n + K1 * (1 - B + (B * t.length) / avg));
        }
      if (c.negate) return [tf === 0, 0];
      return [tf > 0, score * (c.boost ?? 1)];
    });
  });
  const scores = new Map<number, number>();
  records.forEach((r, i) => {
    const m = perClause.map((p) => p[i][0]);
    const ok = spec.op === 'and' ? m.every(Boolean) : m.some(Boolean);
    if (ok && within(r))
      scores.set(
        i,
        perClause.reduce((s, p) => s + p[i][1], 0),
      );
  });
  const order = [...scores.keys()].sort((a, b) => {
    const sa = scores.get(a) ?? 0;
    const sb = scores.get(b) ?? 0;
    if (Math.abs(sa - sb) > 1e-9 * Math.max(sa, sb)) return sb - sa;
    return a - b;
  });
  return { order, scores };
}
