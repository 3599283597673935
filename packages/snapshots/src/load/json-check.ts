import fs from 'node:fs';
import { isUtf8 } from 'node:buffer';
import { AppError } from '@quarry/errors';
import type { RejectLog } from './load-problems';

/**
 * Strict JSON for loads. DuckDB's reader forgives what a careful loader must not (trailing commas,
 * comments, NaN), so every record is first read by JSON.parse, which follows RFC 8259 to the letter,
 * with its line in the file. What passes goes to DuckDB as it was written (never re-serialised, so a
 * big integer keeps every digit).
 */

export interface JsonCheck {
  /** Records read, good or not. */
  rows: number;
  /** The file DuckDB should read: the source itself, or a copy without the rejected records. */
  clean: string;
  /** newline_delimited or array, for DuckDB's read_json. */
  layout: 'newline_delimited' | 'array';
}

/** JSON.parse's own wording without its position (we give the line and column instead). */
function syntaxReason(err: unknown): { reason: string; position?: number } {
  const message = err instanceof Error ? err.message : String(err);
  const at = /at position (\d+)/.exec(message);
  const reason = message
    .replace(/\s*in JSON at position \d+.*$/s, '')
    .replace(/\s*\(line \d+ column \d+\)/, '')
    .replace(/^Unexpected token (.), .*$/s, 'Unexpected $1');
  return { reason: `not valid JSON (${reason.trim() || 'syntax error'})`, position: at ? Number(at[1]) : undefined };
}

function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'string' ? 'a string' : typeof value === 'number' ? 'a number' : `a ${typeof value}`;
}

const notAnObject = (value: unknown) => `the record is ${kindOf(value)}, not an object ({"field": value, …})`;

/**
 * How deep a record may nest objects and arrays. DuckDB's JSON reader recurses per level in native code:
 * a document nested 100,000 deep crashed the process (SIGSEGV), so depth is checked before it reads.
 */
export const MAX_JSON_DEPTH = 64;

/** The offset of the first bracket that opens a level past `max` (strings skipped), or -1 when none does. */
export function tooDeepAt(text: string, max: number): number {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (inString) {
      if (ch === 0x5c) i += 1;
      else if (ch === 0x22) inString = false;
    } else if (ch === 0x22) inString = true;
    else if (ch === 0x5b || ch === 0x7b) {
      depth += 1;
      if (depth > max) return i;
    } else if (ch === 0x5d || ch === 0x7d) depth -= 1;
  }
  return -1;
}

/** The longest line of a JSON Lines file: DuckDB's own limit on one object (maximum_object_size). */
export const MAX_JSON_LINE_BYTES = 64 * 1_048_576;

const tooDeep = `nested deeper than ${MAX_JSON_DEPTH} levels of objects and arrays`;

/** Line (1-based) and column of a character offset. */
function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = text.indexOf('\n'); i >= 0 && i < offset; i = text.indexOf('\n', i + 1)) {
    line += 1;
    lineStart = i + 1;
  }
  return { line, column: offset - lineStart + 1 };
}

/** Byte offset of the first invalid UTF-8 sequence (called only once the file is known not to be valid). */
function firstInvalidUtf8(b: Buffer): number {
  let i = 0;
  while (i < b.length) {
    const c = b[i];
    const n = c < 0x80 ? 0 : c >= 0xc2 && c <= 0xdf ? 1 : c >= 0xe0 && c <= 0xef ? 2 : c >= 0xf0 && c <= 0xf4 ? 3 : -1;
    if (n < 0 || i + n >= b.length) return i;
    // Continuation bytes, and no overlong form or surrogate (isUtf8 judges the one character).
    if (n > 0 && !isUtf8(b.subarray(i, i + n + 1))) return i;
    i += n + 1;
  }
  return b.length;
}

function lineOfByte(buf: Buffer, offset: number): number {
  let line = 1;
  for (let i = buf.indexOf(0x0a); i >= 0 && i < offset; i = buf.indexOf(0x0a, i + 1)) line += 1;
  return line;
}

/** JSON Lines, a line at a time: each non-blank line must be one object. */
export async function checkJsonLines(
  file: string,
  label: string,
  rejects: RejectLog,
  cleanFile: string,
  onBytes: (n: number) => void,
): Promise<JsonCheck> {
  let rows = 0;
  let lineNo = 0;
  let carry: Buffer = Buffer.alloc(0);
  const good: Buffer[] = [];
  let goodBytes = 0;
  let out: number | undefined;
  const flushGood = () => {
    if (out === undefined || good.length === 0) return;
    fs.writeSync(out, Buffer.concat(good));
    good.length = 0;
    goodBytes = 0;
  };
  const takeLine = (raw: Buffer) => {
    lineNo += 1;
    const line = raw.length > 0 && raw[raw.length - 1] === 0x0d ? raw.subarray(0, raw.length - 1) : raw;
    const bomless = lineNo === 1 && line[0] === 0xef && line[1] === 0xbb && line[2] === 0xbf ? line.subarray(3) : line;
    if (bomless.toString('latin1').trim() === '') return;
    rows += 1;
    let problem: string | undefined;
    let column: number | undefined;
    if (!isUtf8(bomless)) problem = 'not valid UTF-8';
    else {
      const text = bomless.toString('utf8');
      const deep = tooDeepAt(text, MAX_JSON_DEPTH);
      try {
        if (deep >= 0) {
          problem = tooDeep;
          column = deep + 1;
        } else {
          const value: unknown = JSON.parse(text);
          if (value === null || typeof value !== 'object' || Array.isArray(value)) problem = notAnObject(value);
        }
      } catch (err) {
        const { reason, position } = syntaxReason(err);
        problem = reason;
        column = position !== undefined ? position + 1 : undefined;
      }
    }
    if (problem) {
      if (out === undefined && rejects.rejectsFile !== undefined) {
        // From the first rejected line on, DuckDB reads a copy that holds only the good ones.
        fs.copyFileSync(file, cleanFile);
        fs.truncateSync(cleanFile, consumedBeforeLine);
        out = fs.openSync(cleanFile, 'a', 0o600);
      }
      rejects.add({
        line: lineNo,
        reason: column !== undefined ? `${problem} at character ${column}` : problem,
        text: bomless.toString('utf8'),
      });
      return;
    }
    if (out !== undefined) {
      good.push(bomless, Buffer.from('\n'));
      goodBytes += bomless.length + 1;
      if (goodBytes > 1 << 20) flushGood();
    }
  };
  let consumedBeforeLine = 0;
  const stream = fs.createReadStream(file, { highWaterMark: 1 << 20 });
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      onBytes(chunk.length);
      let data = carry.length > 0 ? Buffer.concat([carry, chunk]) : chunk;
      let start = 0;
      for (let nl = data.indexOf(0x0a); nl >= 0; nl = data.indexOf(0x0a, start)) {
        takeLine(data.subarray(start, nl));
        consumedBeforeLine += nl + 1 - start;
        start = nl + 1;
      }
      carry = Buffer.from(data.subarray(start));
      data = Buffer.alloc(0);
      // One line is one record: past this it is no record anyone meant (a minified array sent as JSON
      // Lines), and holding it would take the process's memory.
      if (carry.length > MAX_JSON_LINE_BYTES)
        throw AppError.invalid(
          `${label}:${lineNo + 1}: a line longer than ${MAX_JSON_LINE_BYTES / 1_048_576} MiB; JSON Lines hold one record a line (a JSON array is sent as application/json). Nothing was published`,
        );
    }
    if (carry.length > 0) takeLine(carry);
    flushGood();
  } finally {
    if (out !== undefined) fs.closeSync(out);
  }
  if (rows === 0) throw AppError.invalid(`${label} is empty: a JSON Lines file needs at least one line`);
  return { rows, clean: out !== undefined ? cleanFile : file, layout: 'newline_delimited' };
}

/** The offsets of each top-level element of a JSON array already known to be valid JSON. */
function arrayElements(text: string): Array<{ start: number; end: number }> {
  const out: Array<{ start: number; end: number }> = [];
  let depth = 0;
  let inString = false;
  let start = -1;
  const close = (end: number) => {
    let e = end;
    while (e > start && /\s/.test(text[e - 1] ?? '')) e -= 1;
    out.push({ start, end: e });
    start = -1;
  };
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (inString) {
      if (ch === '\\') i += 1;
      else if (ch === '"') inString = false;
      continue;
    }
    if (depth === 1 && start < 0 && !/[\s,\]]/.test(ch)) start = i;
    if (ch === '"') inString = true;
    else if (ch === '[' || ch === '{') depth += 1;
    else if (ch === ']' || ch === '}') {
      depth -= 1;
      if (depth === 0 && start >= 0) close(i);
    } else if (ch === ',' && depth === 1) close(i);
  }
  return out;
}

/** Above this a JSON array cannot be held as one string: such files are loaded as JSON Lines. */
const MAX_JSON_ARRAY_BYTES = 512 * 1024 * 1024;

/** A JSON array of objects (or one object), read whole: JSON has no way to resume after an error. */
export function checkJsonArray(
  file: string,
  label: string,
  rejects: RejectLog,
  cleanFile: string,
  onBytes: (n: number) => void,
): JsonCheck {
  const size = fs.statSync(file).size;
  if (size > MAX_JSON_ARRAY_BYTES) {
    throw AppError.invalid(
      `${label} is a ${Math.round(size / 2 ** 20)} MiB JSON document; above 512 MiB write it as JSON Lines (one object per line, .jsonl)`,
    );
  }
  const buf = fs.readFileSync(file);
  onBytes(buf.length);
  const body = buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf ? buf.subarray(3) : buf;
  if (body.toString('latin1').trim() === '') throw AppError.invalid(`${label} is empty: a JSON file needs [ … ]`);
  if (!isUtf8(body)) {
    const at = firstInvalidUtf8(body);
    throw AppError.invalid(
      `${label}:${lineOfByte(body, at)}: not valid UTF-8 (byte ${at + 1}); JSON must be UTF-8. Nothing was published`,
    );
  }
  const text = body.toString('utf8');
  // The array is one level, its records may nest MAX_JSON_DEPTH below it. Checked before anything parses
  // the text; no record of a document too deep to read can be skipped, as after a syntax error.
  const deep = tooDeepAt(text, text.trimStart().startsWith('[') ? MAX_JSON_DEPTH + 1 : MAX_JSON_DEPTH);
  if (deep >= 0) {
    const where = lineAndColumn(text, deep);
    throw AppError.invalid(`${label}:${where.line}: ${tooDeep} at column ${where.column}. Nothing was published`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    const { reason, position } = syntaxReason(err);
    const where = position !== undefined ? lineAndColumn(text, position) : undefined;
    // One syntax error leaves the rest of an array unreadable: no row can be skipped, whatever --on-error says.
    throw AppError.invalid(
      `${label}${where ? `:${where.line}` : ''}: ${reason}${where ? ` at column ${where.column}` : ''}. Nothing was published`,
    );
  }
  if (!Array.isArray(value)) {
    if (value !== null && typeof value === 'object') return { rows: 1, clean: file, layout: 'array' };
    throw AppError.invalid(`${label}: the document is ${kindOf(value)}; a JSON load needs an array of objects`);
  }
  const bad = value
    .map((v, i) => (v === null || typeof v !== 'object' || Array.isArray(v) ? i : -1))
    .filter((i) => i >= 0);
  if (bad.length === 0) return { rows: value.length, clean: file, layout: 'array' };
  const spans = arrayElements(text);
  const badSet = new Set(bad);
  for (const i of bad) {
    const span = spans[i];
    rejects.add({
      line: span ? lineAndColumn(text, span.start).line : undefined,
      record: i + 1,
      reason: notAnObject(value[i]),
      text: span ? text.slice(span.start, span.end) : (JSON.stringify(value[i]) ?? ''),
    });
  }
  // Only in skip mode do we get here: the good records, each as written, one per line.
  const fd = fs.openSync(cleanFile, 'w', 0o600);
  try {
    spans.forEach((s, i) => {
      if (!badSet.has(i)) fs.writeSync(fd, `${text.slice(s.start, s.end)}\n`);
    });
  } finally {
    fs.closeSync(fd);
  }
  return { rows: value.length, clean: cleanFile, layout: 'newline_delimited' };
}
