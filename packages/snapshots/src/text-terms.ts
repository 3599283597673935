import type { FieldTermCounts, TermCounts } from '@quarry/query-language';
import { literal, wordsColumn } from './sql';

/*
 * The counts a ranked search reads (relevance.ts): per text field the records that have words in it and
 * their words in all, and per word the records holding it. An attachable version stores them, written
 * at load (TERMS_TABLE, TEXT_STATS_TABLE); a version read into memory computes them on its first ranked
 * search. Both come from the words columns every match already reads, so what counts as a word is the
 * same everywhere.
 */

export const TERMS_TABLE = 'quarry_terms';
export const TEXT_STATS_TABLE = 'quarry_text_stats';

/** Words in a words column value (" a b " has 2, "  " none). */
export function wordCountSql(words: string): string {
  return `CASE WHEN ${words} = '  ' THEN 0 ELSE length(${words}) - length(replace(${words}, ' ', '')) - 1 END`;
}

const textFieldsOf = (fields: ReadonlyArray<{ name: string; type: string }>) =>
  fields.filter((f) => f.type === 'string').map((f) => f.name);

/** (field, word, df): each word of each text field with the records holding it. */
export function termsSql(from: string, fields: ReadonlyArray<{ name: string; type: string }>): string {
  const parts = textFieldsOf(fields).map((f) => {
    const w = wordsColumn(f);
    return `SELECT ${literal(f)} AS field, word, count(*) AS df FROM (SELECT unnest(list_distinct(string_split(trim(${w}), ' '))) AS word FROM ${from} WHERE ${w} IS NOT NULL AND ${w} <> '  ') GROUP BY word`;
  });
  return parts.length
    ? parts.join(' UNION ALL ')
    : `SELECT NULL::VARCHAR AS field, NULL::VARCHAR AS word, 0::BIGINT AS df WHERE false`;
}

/** (field, docs, words): the records with words in each text field, and those words in all. */
export function textStatsSql(from: string, fields: ReadonlyArray<{ name: string; type: string }>): string {
  const parts = textFieldsOf(fields).map((f) => {
    const n = `(${wordCountSql(wordsColumn(f))})`;
    return `SELECT ${literal(f)} AS field, count(*) FILTER (WHERE ${n} > 0) AS docs, coalesce(sum(${n}), 0)::BIGINT AS words FROM ${from}`;
  });
  return parts.length
    ? parts.join(' UNION ALL ')
    : `SELECT NULL::VARCHAR AS field, 0::BIGINT AS docs, 0::BIGINT AS words WHERE false`;
}

/** A version's term counts, held by this process: what a ranked or fuzzy search reads. */
export class VersionTerms implements TermCounts {
  private readonly sortedCache = new Map<string, string[]>();

  constructor(
    private readonly counts: ReadonlyMap<string, FieldTermCounts>,
    private readonly words: ReadonlyMap<string, ReadonlyMap<string, number>>,
  ) {}

  field(name: string): FieldTermCounts | undefined {
    return this.counts.get(name);
  }

  df(field: string, word: string): number {
    return this.words.get(field)?.get(word) ?? 0;
  }

  /** The distinct words of these fields together (a fuzzy word's candidates). */
  vocabulary(fields: readonly string[]): Iterable<string> {
    if (fields.length === 1) return this.words.get(fields[0])?.keys() ?? [];
    const key = JSON.stringify(fields);
    let all = this.sortedCache.get(key);
    if (!all) {
      const set = new Set<string>();
      for (const f of fields) for (const w of this.words.get(f)?.keys() ?? []) set.add(w);
      all = [...set];
      if (this.sortedCache.size < 16) this.sortedCache.set(key, all);
    }
    return all;
  }

  /** Bytes held, roughly (a word costs its characters twice and a map entry). */
  get bytes(): number {
    let n = 0;
    for (const m of this.words.values()) for (const w of m.keys()) n += 2 * w.length + 64;
    return n;
  }
}

/** Reads a version's term counts from its stored tables or computes them over its records. */
export async function readTerms(
  all: (sql: string) => Promise<Array<Record<string, unknown>>>,
  source: { terms: string; stats: string } | { records: string },
  fields: ReadonlyArray<{ name: string; type: string }>,
): Promise<VersionTerms> {
  const [statRows, termRows] = await Promise.all([
    all('stats' in source ? `SELECT * FROM ${source.stats}` : textStatsSql(source.records, fields)),
    all('terms' in source ? `SELECT * FROM ${source.terms}` : termsSql(source.records, fields)),
  ]);
  const counts = new Map<string, FieldTermCounts>();
  for (const r of statRows) counts.set(String(r.field), { docs: Number(r.docs), words: Number(r.words) });
  const words = new Map<string, Map<string, number>>();
  for (const r of termRows) {
    const field = String(r.field);
    let m = words.get(field);
    if (!m) words.set(field, (m = new Map()));
    m.set(String(r.word), Number(r.df));
  }
  return new VersionTerms(counts, words);
}
