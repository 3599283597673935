import fs from 'node:fs';
import { isUtf8 } from 'node:buffer';
import { parse } from 'csv-parse/sync';
import { AppError } from '@quarry/errors';

/** The text encodings a load reads; anything not UTF-8 must be named with --encoding. */
export type SourceEncoding = 'utf-8' | 'latin1';

export interface CsvDialect {
  delimiter: string;
  /** The header's field names exactly as the file spells them. */
  names: string[];
}

/** The header must end within this many bytes: a longer first record is a quote that never closes. */
const HEADER_MAX_BYTES = 1 << 20;
const CANDIDATES = [',', '\t', ';', '|'];

/**
 * The delimiter is read off the header line alone (the most frequent candidate outside quotes), never
 * sniffed from data rows: a ragged row must be reported as ragged, not turn the file into one column.
 */
function delimiterOf(firstLine: string, extension: string): string {
  if (extension === '.tsv') return '\t';
  const counts = new Map(CANDIDATES.map((c) => [c, 0]));
  let quoted = false;
  for (const ch of firstLine) {
    if (ch === '"') quoted = !quoted;
    else if (!quoted && counts.has(ch)) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  }
  let best = ',';
  for (const [c, n] of counts) if (n > (counts.get(best) ?? 0)) best = c;
  return best;
}

/** Reads the header record of a CSV file and checks its names: none blank, none repeated. */
export function readCsvHeader(file: string, label: string, extension: string, encoding: SourceEncoding): CsvDialect {
  const size = fs.statSync(file).size;
  const fd = fs.openSync(file, 'r');
  let head: Buffer;
  try {
    head = Buffer.alloc(Math.min(size, HEADER_MAX_BYTES + 4));
    fs.readSync(fd, head, 0, head.length, 0);
  } finally {
    fs.closeSync(fd);
  }
  const bom = head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf ? 3 : 0;
  const body = head.subarray(bom);
  if (body.toString('latin1').trim() === '')
    throw AppError.invalid(`${label} is empty: a CSV file needs a header line`);
  const firstLineEnd = body.indexOf(0x0a);
  const firstLineBytes = firstLineEnd < 0 ? body : body.subarray(0, firstLineEnd);
  if (encoding === 'utf-8' && !isUtf8(firstLineBytes)) {
    throw AppError.invalid(
      `${label}:1: the header is not valid UTF-8; if the file is Latin-1, load it with --encoding latin1`,
    );
  }
  const text = body.toString(encoding === 'latin1' ? 'latin1' : 'utf8');
  const delimiter = delimiterOf(text.slice(0, text.search(/\r?\n|$/)), extension);
  let records: string[][];
  try {
    records = parse(text, { delimiter, to: 1, relax_column_count: true, skip_empty_lines: false }) as string[][];
  } catch (err) {
    const unclosed = /quote|Quote/.test(err instanceof Error ? err.message : '');
    if (unclosed && size > HEADER_MAX_BYTES) {
      throw AppError.invalid(`${label}:1: the header does not end within 1 MiB (a quote that is never closed?)`);
    }
    throw AppError.invalid(
      `${label}:1: the header cannot be read: ${unclosed ? 'a quote opened in it is never closed' : 'it is not valid CSV'}`,
    );
  }
  const names = records[0] ?? [];
  const blank = names.map((n, i) => (n.trim() === '' ? i + 1 : 0)).filter((i) => i > 0);
  if (blank.length > 0) {
    throw AppError.invalid(
      `${label}:1: the header has a blank name in column ${blank.join(', ')}; every column needs a name`,
    );
  }
  const seen = new Map<string, number>();
  const repeated: string[] = [];
  for (const n of names) {
    const key = n.trim().toLowerCase();
    seen.set(key, (seen.get(key) ?? 0) + 1);
    if (seen.get(key) === 2) repeated.push(`"${n}"`);
  }
  if (repeated.length > 0) {
    throw AppError.invalid(
      `${label}:1: the header names ${repeated.join(', ')} more than once (names are compared ignoring case); rename the repeated columns`,
    );
  }
  return { delimiter, names };
}

/**
 * Checks that a file is UTF-8, a line at a time, reporting bytes read as it goes. A strict load fails
 * on the first bad line here, naming it, before DuckDB reads a byte (its own check would only reject the
 * row). Lines are cut at LF, which never occurs inside a multi-byte character.
 */
export async function checkUtf8(file: string, label: string, onBytes: (n: number) => void): Promise<void> {
  let line = 1;
  let carry: Buffer = Buffer.alloc(0);
  const fail = (at: number) => {
    throw AppError.invalid(
      `${label}:${at}: not valid UTF-8 (if the file is Latin-1, load it with --encoding latin1). Nothing was published`,
    );
  };
  const check = (buf: Buffer) => {
    if (isUtf8(buf)) {
      for (let i = buf.indexOf(0x0a); i >= 0; i = buf.indexOf(0x0a, i + 1)) line += 1;
      return;
    }
    let start = 0;
    for (let nl = buf.indexOf(0x0a); ; nl = buf.indexOf(0x0a, start)) {
      const end = nl < 0 ? buf.length : nl;
      if (!isUtf8(buf.subarray(start, end))) fail(line);
      if (nl < 0) return;
      line += 1;
      start = nl + 1;
    }
  };
  for await (const chunk of fs.createReadStream(file, { highWaterMark: 1 << 22 }) as AsyncIterable<Buffer>) {
    onBytes(chunk.length);
    const data = carry.length > 0 ? Buffer.concat([carry, chunk]) : chunk;
    const lastNl = data.lastIndexOf(0x0a);
    if (lastNl < 0) {
      carry = Buffer.from(data);
      continue;
    }
    check(data.subarray(0, lastNl + 1));
    carry = Buffer.from(data.subarray(lastNl + 1));
  }
  if (carry.length > 0) check(carry);
}
