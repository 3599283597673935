import { foldCase, type QueryNode } from './query-node';
import { positiveLeaves } from './relevance';

/** A word sequence to mark; with `prefix` its last word need only start so. */
interface Pattern {
  words: string[];
  prefix: boolean;
}

/** What a (fuzzy-resolved) query marks in each text field: its words, phrases, prefixes and expansions. */
export function highlightPatterns(node: QueryNode): Map<string, Pattern[]> {
  const out = new Map<string, Pattern[]>();
  for (const leaf of positiveLeaves(node)) {
    if (leaf.kind !== 'match') continue;
    const patterns: Pattern[] = leaf.fuzzy
      ? (leaf.expansions ?? []).map((w) => ({ words: [w], prefix: false }))
      : [{ words: leaf.words, prefix: leaf.prefix }];
    for (const f of leaf.fields) out.set(f, [...(out.get(f) ?? []), ...patterns]);
  }
  return out;
}

const HTML: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => HTML[c]);

/** Words as every engine splits them: runs of letters and digits, where they stand in the text. */
const WORD = /[\p{L}\p{N}]+/gu;

/**
 * A fragment of `text` of at most about `size` characters around its first match, the matched words in
 * <mark>…</mark> and everything else HTML-escaped, "…" where it was cut; null when nothing matches.
 */
export function highlightText(text: string, patterns: readonly Pattern[], size: number): string | null {
  const tokens = [...text.matchAll(WORD)].map((m) => ({
    start: m.index,
    end: m.index + m[0].length,
    word: foldCase(m[0]),
  }));
  const marked = new Uint8Array(tokens.length);
  for (const p of patterns) {
    const n = p.words.length;
    for (let i = 0; i + n <= tokens.length; i++) {
      let k = 0;
      while (
        k < n &&
        (p.prefix && k === n - 1 ? tokens[i + k].word.startsWith(p.words[k]) : tokens[i + k].word === p.words[k])
      )
        k++;
      if (k === n) {
        marked.fill(1, i, i + n);
        i += n - 1;
      }
    }
  }
  const first = marked.indexOf(1);
  if (first < 0) return null;
  let from = 0;
  let to = text.length;
  if (text.length > size) {
    // A fifth of the room before the first match, the rest after; cut only between words.
    from = Math.max(0, tokens[first].start - Math.floor(size / 5));
    to = Math.min(text.length, from + size);
    const startsIn = tokens.find((t) => t.end > from);
    if (startsIn && startsIn.start < from) from = startsIn.end < tokens[first].start ? startsIn.end : startsIn.start;
    const endsIn = tokens.find((t) => t.end > to);
    if (endsIn && endsIn.start < to) to = endsIn.start > tokens[first].end ? endsIn.start : endsIn.end;
  }
  let out = from > 0 ? '…' : '';
  let at = from;
  tokens.forEach((t, i) => {
    if (!marked[i] || t.start < from || t.end > to) return;
    out += `${escapeHtml(text.slice(at, t.start))}<mark>${escapeHtml(text.slice(t.start, t.end))}</mark>`;
    at = t.end;
  });
  out += escapeHtml(text.slice(at, to));
  return to < text.length ? `${out}…` : out;
}

/**
 * Per record, field → fragment for the fields asked (default: those the query's words test) that hold
 * a match; records are the page's, as JSON gives them.
 */
export function highlightRecords(
  records: ReadonlyArray<Record<string, unknown>>,
  node: QueryNode,
  opts: { fields?: readonly string[]; fragmentSize: number },
): Array<Record<string, string>> {
  const patterns = highlightPatterns(node);
  const fields = opts.fields ?? [...patterns.keys()];
  return records.map((r) => {
    const out: Record<string, string> = {};
    for (const f of fields) {
      const value = r[f];
      const ps = patterns.get(f);
      if (typeof value !== 'string' || !ps) continue;
      const fragment = highlightText(value, ps, opts.fragmentSize);
      if (fragment !== null) out[f] = fragment;
    }
    return out;
  });
}
