import { JSDuckDBValueConverter, type DuckDBValue } from '@duckdb/node-api';
import { ident, recordJsonSql, wordsColumn, type SnapshotEngine, type SnapshotRef } from '@quarry/snapshots';
import { compareCodePoints } from './compare-code-points';

/**
 * One field of a small index held in JS arrays, in record order, with what a search needs of it.
 * The values come from DuckDB itself over the loaded table (lower(), the words column), so a predicate
 * here reads the very values the SQL path compares. A snapshot never holds NaN or the infinities
 * (build-snapshot stores them as missing).
 */
export type MemoryColumn =
  | {
      kind: 'text';
      /** lower(value) as DuckDB lowers it; null when missing. */
      lower: ReadonlyArray<string | null>;
      /** The words column (" word word "), null when missing. */
      words: ReadonlyArray<string | null>;
    }
  | {
      kind: 'integer';
      /** Exact: a number when safe, a bigint beyond 2^53 (JS compares the two exactly). */
      values: ReadonlyArray<number | bigint | null>;
    }
  | { kind: 'number'; values: ReadonlyArray<number | null> }
  | { kind: 'boolean'; values: ReadonlyArray<boolean | null> }
  | {
      kind: 'date';
      /** Whole milliseconds since the epoch (floored), null when missing. */
      ms: ReadonlyArray<number | null>;
      /** The microseconds below that millisecond (0-999): timestamps may be finer than a literal. */
      subMs: Uint16Array;
    };

type Kind = MemoryColumn['kind'];

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
  /** Mean length of a present words column value: what one substring test reads. */
  meanChars: number;
  /** Records with at least one word in the field, and their words in all (what BM25 reads). */
  docs: number;
  totalWords: number;
}

/** The DuckDB column types a snapshot stores (build-snapshot); any other keeps the index on SQL. */
const KINDS: Record<string, Kind> = {
  VARCHAR: 'text',
  BIGINT: 'integer',
  DOUBLE: 'number',
  BOOLEAN: 'boolean',
  DATE: 'date',
  TIMESTAMP: 'date',
};

/** What a column holds per record beyond its values: arrays, numbers, and the word index's row numbers. */
const BYTES_PER_VALUE = 24;
/** A JS string's header, and a vocabulary word's Int32Array besides its rows. */
const STRING_BYTES = 16;
const WORD_BYTES = 96;

/**
 * A small index's published version held in memory: per record its JSON text (built once by the same
 * SQL the search path runs), and the columns searches have asked for, each read from DuckDB on first
 * use. Searching it is a scan in JS, with no statement to plan or result to convert (bench/README.md,
 * latency; `bench/in-memory-search.bench.js`).
 */
export class InMemoryTable {
  private readonly columns = new Map<string, MemoryColumn>();
  private readonly ranks = new Map<string, Int32Array>();
  private readonly wordIndexes = new Map<string, WordIndex>();
  /** Columns being read, by field: concurrent searches wait for the same read. */
  private readonly reading = new Map<string, Promise<void>>();
  /** Fields whose read failed: they stay on SQL for this version rather than being read on every search. */
  private readonly unreadable = new Set<string>();
  /** See approxBytes(). */
  private readonly expectedBytes: number;
  private held: number;
  /** Called after a column, word index or sort rank is added: the holder checks its memory budget. */
  onGrow: (() => void) | undefined;

  private constructor(
    private readonly engine: SnapshotEngine,
    private readonly ref: SnapshotRef,
    private readonly kinds: ReadonlyMap<string, Kind>,
    readonly size: number,
    /** Each record's JSON text, in record order. */
    readonly records: readonly string[],
  ) {
    const chars = records.reduce((n, r) => n + r.length, 0);
    this.held = STRING_BYTES * size + 2 * chars;
    this.expectedBytes = chars * 2 * 3 + kinds.size * size * (BYTES_PER_VALUE + 4);
  }

  /**
   * Reads a loaded snapshot's records into memory, or null when a field has a type this path does not
   * know (the SQL path then answers, as it always could).
   */
  static async load(engine: SnapshotEngine, ref: SnapshotRef): Promise<InMemoryTable | null> {
    const loaded = await engine.table(ref);
    const kinds = new Map<string, Kind>();
    for (const f of ref.fields) {
      const kind = KINDS[loaded.columnTypes.get(f.name) ?? ''];
      if (!kind) return null;
      kinds.set(f.name, kind);
    }
    const sql = `SELECT ${recordJsonSql(ref.fields, loaded.columnTypes)} AS j FROM ${ident(loaded.table)} ORDER BY __rowid`;
    const [json] = await readInChunks(engine, sql);
    const records = (json ?? []).map(String);
    return new InMemoryTable(engine, ref, kinds, records.length, records);
  }

  /**
   * Approximate bytes this version will hold once every field is read and searched: the records' JSON
   * (UTF-16), as much again for the text columns and their words, each word once more in a word index,
   * and the arrays and sort ranks. Decides whether a version is read in at all; heldBytes() keeps count after.
   */
  approxBytes(): number {
    return this.expectedBytes;
  }

  /** Approximate bytes held now: the records and what searches have built so far. */
  heldBytes(): number {
    return this.held;
  }

  private grew(bytes: number): void {
    this.held += bytes;
    this.onGrow?.();
  }

  /** Resolves once the reads under way are done. */
  async settled(): Promise<void> {
    await Promise.all(this.reading.values());
  }

  /** Whether every field named is held (fields of another index or version never are). */
  holds(fields: Iterable<string>): boolean {
    for (const f of fields) if (!this.columns.has(f)) return false;
    return true;
  }

  column(field: string): MemoryColumn | undefined {
    return this.columns.get(field);
  }

  /**
   * Reads the columns of these fields that are neither held nor being read, in one statement; resolves
   * once all of them are held or have failed to read (then they are never held: see `unreadable`).
   */
  async readColumns(fields: Iterable<string>): Promise<void> {
    const wanted = [...new Set(fields)];
    const missing = wanted.filter((f) => !this.columns.has(f) && !this.reading.has(f) && !this.unreadable.has(f));
    if (missing.length > 0) {
      const read = this.read(missing)
        // A read that failed once (a value DuckDB cannot cast, the version retired under it) would
        // fail again: the fields stay unheld, and searches naming them go to SQL.
        .catch(() => missing.forEach((f) => this.unreadable.add(f)))
        .finally(() => missing.forEach((f) => this.reading.delete(f)));
      missing.forEach((f) => this.reading.set(f, read));
    }
    await Promise.all(wanted.map((f) => this.reading.get(f)));
  }

  private async read(missing: string[]): Promise<void> {
    const loaded = await this.engine.table(this.ref);
    const select: string[] = [];
    const at = missing.map((f) => {
      const col = ident(f);
      const kind = this.kinds.get(f);
      if (!kind) throw new Error(`no field ${f}`);
      const first = select.length;
      // Text: lower() and the words column; dates: microseconds, which a JS number cannot always hold.
      if (kind === 'text') select.push(`lower(${col})`, wordsColumn(f));
      else if (kind === 'date') select.push(`epoch_us(CAST(${col} AS TIMESTAMP))`);
      else select.push(col);
      return { field: f, kind, first };
    });
    const data = await readInChunks(
      this.engine,
      `SELECT ${select.join(', ')} FROM ${ident(loaded.table)} ORDER BY __rowid`,
    );
    let bytes = 0;
    for (const { field, kind, first } of at) {
      if (this.columns.has(field)) continue;
      const { column, chars } = toColumn(kind, data[first] ?? [], data[first + 1] ?? [], this.size);
      this.columns.set(field, column);
      bytes += this.size * BYTES_PER_VALUE + 2 * chars;
    }
    this.grew(bytes);
  }

  /**
   * Dense ranks of a field's values in the SQL path's ORDER BY (text: lower() in byte order; -0 equal
   * to 0), -1 when missing; computed on the first sort by the field.
   */
  rank(field: string): Int32Array {
    const known = this.ranks.get(field);
    if (known) return known;
    const column = this.columns.get(field);
    if (!column) throw new Error(`no column ${field}`);
    const compare = valueOrder(column);
    const present: number[] = [];
    const rank = new Int32Array(this.size).fill(-1);
    for (let row = 0; row < this.size; row++) if (!isMissing(column, row)) present.push(row);
    present.sort(compare);
    let r = 0;
    present.forEach((row, i) => {
      if (i > 0 && compare(present[i - 1], row) !== 0) r++;
      rank[row] = r;
    });
    this.ranks.set(field, rank);
    this.grew(rank.byteLength);
    return rank;
  }

  /** The word index of a held text field, built on its first word match. */
  wordIndex(field: string): WordIndex | null {
    const known = this.wordIndexes.get(field);
    if (known) return known;
    const c = this.columns.get(field);
    if (c?.kind !== 'text') return null;
    const rowsOf = new Map<string, number[]>();
    let chars = 0;
    let present = 0;
    let docs = 0;
    let totalWords = 0;
    c.words.forEach((text, row) => {
      if (text === null) return;
      chars += text.length;
      present++;
      let n = 0;
      for (const word of text.split(' ')) {
        if (word === '') continue;
        n++;
        const rows = rowsOf.get(word);
        // Rows arrive in order: a repeated word in one record is recorded once.
        if (!rows) rowsOf.set(word, [row]);
        else if (rows[rows.length - 1] !== row) rows.push(row);
      }
      if (n > 0) docs++;
      totalWords += n;
    });
    const vocabulary = [...rowsOf.keys()].sort();
    const rows = vocabulary.map((w) => Int32Array.from(rowsOf.get(w) ?? []));
    const index = { vocabulary, rows, words: c.words, meanChars: present ? chars / present : 0, docs, totalWords };
    this.wordIndexes.set(field, index);
    let bytes = 0;
    vocabulary.forEach((w, i) => (bytes += WORD_BYTES + 2 * w.length + rows[i].byteLength));
    this.grew(bytes);
    return index;
  }
}

export function isMissing(column: MemoryColumn, row: number): boolean {
  switch (column.kind) {
    case 'text':
      return column.lower[row] === null;
    case 'date':
      return column.ms[row] === null;
    default:
      return column.values[row] === null;
  }
}

/** Compares two records' present values as DuckDB orders them. */
function valueOrder(column: MemoryColumn): (a: number, b: number) => number {
  const order = <T extends number | bigint>(x: T, y: T) => (x < y ? -1 : x > y ? 1 : 0);
  switch (column.kind) {
    case 'text':
      return (a, b) => compareCodePoints(column.lower[a] as string, column.lower[b] as string);
    case 'integer':
    case 'number':
      return (a, b) => order(column.values[a] as number | bigint, column.values[b] as number | bigint);
    case 'boolean':
      return (a, b) => Number(column.values[a]) - Number(column.values[b]);
    case 'date':
      return (a, b) => order(column.ms[a] as number, column.ms[b] as number) || column.subMs[a] - column.subMs[b];
  }
}

type Js = DuckDBValue | unknown;

/**
 * A statement's result by column, read a chunk (2,048 rows) at a time: reading a version happens while
 * the thread serves other calls, and converting 100,000 rows at once would hold it for a second.
 */
async function readInChunks(engine: SnapshotEngine, sql: string): Promise<Js[][]> {
  return engine.withConnection(async (c) => {
    const result = await c.stream(sql);
    const columns: Js[][] = [];
    for (;;) {
      const chunk = await result.fetchChunk();
      if (!chunk || chunk.rowCount === 0) return columns;
      chunk.convertColumns(JSDuckDBValueConverter).forEach((values, i) => {
        const out = (columns[i] ??= []);
        for (const v of values) out.push(v);
      });
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
  });
}

/**
 * A field's column from its values (text: lower() values, then the words column), with the characters
 * of the distinct strings it holds.
 */
function toColumn(
  kind: Kind,
  values: readonly Js[],
  words: readonly Js[],
  size: number,
): { column: MemoryColumn; chars: number } {
  switch (kind) {
    case 'text': {
      const lower = interned(values);
      const w = interned(words);
      return { column: { kind: 'text', lower: lower.values, words: w.values }, chars: lower.chars + w.chars };
    }
    case 'integer':
      return { column: { kind: 'integer', values: values.map(exactInteger) }, chars: 0 };
    case 'number':
      return { column: { kind: 'number', values: values.map((v) => (v === null ? null : Number(v))) }, chars: 0 };
    case 'boolean':
      return { column: { kind: 'boolean', values: values.map((v) => (v === null ? null : Boolean(v))) }, chars: 0 };
    case 'date': {
      const subMs = new Uint16Array(size);
      const ms = values.map((v, row) => {
        if (v === null) return null;
        const us = BigInt(v as bigint | number);
        // Floor, not truncation: before 1970 the microseconds still count up from the millisecond.
        let whole = us / 1000n;
        if (whole * 1000n > us) whole -= 1n;
        subMs[row] = Number(us - whole * 1000n);
        return Number(whole);
      });
      return { column: { kind: 'date', ms, subMs }, chars: 0 };
    }
  }
}

function exactInteger(v: Js): number | bigint | null {
  if (v === null || v === undefined) return null;
  if (typeof v === 'bigint')
    return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v;
  return Number(v);
}

/**
 * One JS string per distinct value (codes, states and genres repeat across thousands of records), and
 * the characters of those distinct strings (with a header each).
 */
function interned(values: readonly Js[] | undefined): { values: Array<string | null>; chars: number } {
  const seen = new Map<string, string>();
  let chars = 0;
  const out = (values ?? []).map((v) => {
    if (v === null || v === undefined) return null;
    const s = String(v);
    const known = seen.get(s);
    if (known !== undefined) return known;
    seen.set(s, s);
    chars += s.length + STRING_BYTES / 2;
    return s;
  });
  return { values: out, chars };
}
