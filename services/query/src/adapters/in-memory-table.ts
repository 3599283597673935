import type { DuckDBValue } from '@duckdb/node-api';
import { ident, recordJsonSql, wordsColumn, type SnapshotEngine, type SnapshotRef } from '@quarry/snapshots';

/**
 * One field of a small index held in JS arrays, in record order, with what a search needs of it.
 * Each array comes from DuckDB itself over the loaded table (lower(), the words column, ranks of its
 * ORDER BY), so a predicate or a sort here reads the very values the SQL path compares.
 */
export type MemoryColumn =
  | {
      kind: 'text';
      /** lower(value) as DuckDB lowers it; null when missing. */
      lower: ReadonlyArray<string | null>;
      /** The words column (" word word "), null when missing. */
      words: ReadonlyArray<string | null>;
      rank: Int32Array;
    }
  | {
      kind: 'integer';
      /** Exact: a number when safe, a bigint beyond 2^53 (JS compares the two exactly). */
      values: ReadonlyArray<number | bigint | null>;
      rank: Int32Array;
    }
  | { kind: 'number'; values: ReadonlyArray<number | null>; rank: Int32Array }
  | { kind: 'boolean'; values: ReadonlyArray<boolean | null>; rank: Int32Array }
  | {
      kind: 'date';
      /** Whole milliseconds since the epoch (floored), null when missing. */
      ms: ReadonlyArray<number | null>;
      /** The microseconds below that millisecond (0-999): timestamps may be finer than a literal. */
      subMs: Uint16Array;
      rank: Int32Array;
    };

/**
 * A text field's words, each with the records that hold it: a word match is a lookup, a prefix a range
 * of the sorted vocabulary, and a phrase the records holding all its words, then checked against the
 * words column as the SQL path's substring test would.
 */
export interface WordIndex {
  /** Distinct words, sorted (by UTF-16 unit: words sharing a prefix are adjacent in any such order). */
  vocabulary: readonly string[];
  /** Per word of the vocabulary, the records holding it, ascending. */
  rows: readonly Int32Array[];
  /** The field's words column. */
  words: ReadonlyArray<string | null>;
}

/** The DuckDB column types a snapshot stores (build-snapshot); any other keeps the index on SQL. */
const KINDS: Record<string, MemoryColumn['kind']> = {
  VARCHAR: 'text',
  BIGINT: 'integer',
  DOUBLE: 'number',
  BOOLEAN: 'boolean',
  DATE: 'date',
  TIMESTAMP: 'date',
};

/**
 * A small index's published version held in memory: per field its columns, per record its JSON text
 * (built once by the same SQL the search path runs). Searching it is a scan in JS, with no statement
 * to plan or result to convert (bench/README.md, latency).
 */
export class InMemoryTable {
  /** Word indexes by text field, built on first use. */
  private readonly wordIndexes = new Map<string, WordIndex>();

  private constructor(
    readonly size: number,
    readonly columns: ReadonlyMap<string, MemoryColumn>,
    /** Each record's JSON text, in record order. */
    readonly records: readonly string[],
  ) {}

  /**
   * Approximate bytes held, for the size limit: the records' JSON (UTF-16), the columns, and the word
   * indexes matches build (a row number per word of each record).
   */
  static approxBytes(table: InMemoryTable): number {
    let chars = 0;
    for (const r of table.records) chars += r.length;
    let words = 0;
    for (const c of table.columns.values()) {
      if (c.kind === 'text') for (const w of c.words) words += (w?.length ?? 0) / 4;
    }
    return chars * 2 + words * 4 + table.columns.size * table.size * 16;
  }

  /** The word index of a text field, built on its first word match. */
  wordIndex(field: string): WordIndex | null {
    const known = this.wordIndexes.get(field);
    if (known) return known;
    const c = this.columns.get(field);
    if (c?.kind !== 'text') return null;
    const rowsOf = new Map<string, number[]>();
    c.words.forEach((text, row) => {
      if (text === null) return;
      for (const word of text.split(' ')) {
        if (word === '') continue;
        const rows = rowsOf.get(word);
        // Rows arrive in order: a repeated word in one record is recorded once.
        if (!rows) rowsOf.set(word, [row]);
        else if (rows[rows.length - 1] !== row) rows.push(row);
      }
    });
    const vocabulary = [...rowsOf.keys()].sort();
    const index = { vocabulary, rows: vocabulary.map((w) => Int32Array.from(rowsOf.get(w) ?? [])), words: c.words };
    this.wordIndexes.set(field, index);
    return index;
  }

  /**
   * Reads a loaded snapshot into memory, or null when a column has a type this path does not know
   * (the SQL path then answers, as it always could).
   */
  static async load(engine: SnapshotEngine, ref: SnapshotRef): Promise<InMemoryTable | null> {
    const loaded = await engine.table(ref);
    const kinds = new Map<string, MemoryColumn['kind']>();
    for (const f of ref.fields) {
      const kind = KINDS[loaded.columnTypes.get(f.name) ?? ''];
      if (!kind) return null;
      kinds.set(f.name, kind);
    }
    const select = [`${recordJsonSql(ref.fields, loaded.columnTypes)} AS j`];
    ref.fields.forEach((f, i) => {
      const col = ident(f.name);
      const kind = kinds.get(f.name);
      // Ranks of the very expression the SQL path sorts by (lower() for text), so ties and order agree.
      const sortExpr = kind === 'text' ? `lower(${col})` : col;
      select.push(`CASE WHEN ${col} IS NULL THEN -1 ELSE dense_rank() OVER (ORDER BY ${sortExpr}) END AS r${i}`);
      if (kind === 'text') select.push(`lower(${col}) AS l${i}`, `${wordsColumn(f.name)} AS w${i}`);
      else if (kind === 'date') select.push(`epoch_us(CAST(${col} AS TIMESTAMP)) AS v${i}`);
      else select.push(`${col} AS v${i}`);
    });
    const sql = `SELECT ${select.join(', ')} FROM ${ident(loaded.table)} ORDER BY __rowid`;
    const data = await engine.withConnection(async (c) => (await c.runAndReadAll(sql)).getColumnsObjectJS());
    const records = (data.j ?? []).map(String);
    const size = records.length;
    const columns = new Map<string, MemoryColumn>();
    ref.fields.forEach((f, i) => {
      const rank = Int32Array.from(data[`r${i}`] ?? [], (r) => Number(r));
      switch (kinds.get(f.name)) {
        case 'text':
          columns.set(f.name, { kind: 'text', lower: interned(data[`l${i}`]), words: interned(data[`w${i}`]), rank });
          break;
        case 'integer':
          columns.set(f.name, { kind: 'integer', values: (data[`v${i}`] ?? []).map(exactInteger), rank });
          break;
        case 'number':
          columns.set(f.name, { kind: 'number', values: (data[`v${i}`] ?? []).map((v) => (v === null ? null : Number(v))), rank });
          break;
        case 'boolean':
          columns.set(f.name, { kind: 'boolean', values: (data[`v${i}`] ?? []).map((v) => (v === null ? null : Boolean(v))), rank });
          break;
        case 'date': {
          const subMs = new Uint16Array(size);
          const ms = (data[`v${i}`] ?? []).map((v, row) => {
            if (v === null) return null;
            const us = BigInt(v as bigint | number);
            // Floor, not truncation: before 1970 the microseconds still count up from the millisecond.
            let whole = us / 1000n;
            if (whole * 1000n > us) whole -= 1n;
            subMs[row] = Number(us - whole * 1000n);
            return Number(whole);
          });
          columns.set(f.name, { kind: 'date', ms, subMs, rank });
          break;
        }
      }
    });
    return new InMemoryTable(size, columns, records);
  }
}

type Js = DuckDBValue | unknown;

function exactInteger(v: Js): number | bigint | null {
  if (v === null || v === undefined) return null;
  if (typeof v === 'bigint') return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v;
  return Number(v);
}

/** One JS string per distinct value: codes, states and genres repeat across thousands of records. */
function interned(values: readonly Js[] | undefined): Array<string | null> {
  const seen = new Map<string, string>();
  return (values ?? []).map((v) => {
    if (v === null || v === undefined) return null;
    const s = String(v);
    const known = seen.get(s);
    if (known !== undefined) return known;
    seen.set(s, s);
    return s;
  });
}
