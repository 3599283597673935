import { createHash } from 'node:crypto';
import { AppError } from '@quarry/errors';
import type { CompareOp } from '@quarry/query-language';

/*
 * How Quarry values become Typesense tokens and keys so that Typesense answers exactly what the
 * embedded engine answers. Everything here is pure; the reasons are in Typesense v28.0's sources:
 * - its tokenizer lower-cases ASCII, drops every ASCII symbol that is not indexed (`_` included) and
 *   folds accents through iconv ASCII//TRANSLIT (src/tokenizer.cpp, include/tokenizer.h
 *   get_stream_mode), and it cuts tokens at 100 bytes (src/index.cpp tokenize_string_array,
 *   src/filter_result_iterator.cpp). So text is stored as tokens made only of [0-9a-z], which the
 *   tokenizer keeps verbatim, and long tokens end in a hash of the whole;
 * - `float` fields are 32-bit (filter_result_iterator.cpp parses float filter values with
 *   `(float)std::atof`) and int64 filter values must be integers (src/filter.cpp
 *   validate_numerical_filter_value). So every number, date and boolean is stored as an int64 key whose
 *   order is the value's order, and every bound is turned into an integer bound here;
 * - a missing sort value scores INT64_MIN (src/index.cpp, `default_score`), so no key may be INT64_MIN.
 */

/** Typesense keeps the first 100 bytes of a token. */
export const TOKEN_MAX = 100;
/** Real encoding kept before the hash in a token that would be longer than TOKEN_MAX. */
const TOKEN_KEEP = 72;
/** Longest codeword below: `z6` and six hex digits. */
const CODEWORD_MAX = 8;
/**
 * Longest prefix a Typesense prefix filter can test exactly: any stored token keeps at least this
 * much of its real encoding before the hash.
 */
export const PREFIX_MAX = TOKEN_KEEP - (CODEWORD_MAX - 1);
/** Prefixes of up to this many characters are stored as tokens of their own, so they need no expansion. */
export const STORED_PREFIX_CHARS = 3;

/** Separates the two words of a pair; no codeword starts with it, so pairs never collide. */
const PAIR_SEPARATOR = 'z0';
/** Ends the field number that opens every token. */
const TAG_END = 'z8';
/** Follows the kept part of a long token; the hash of the whole token comes after it. */
const HASH_MARK = 'z9';

/**
 * A prefix-free code from any text to [0-9a-z]: letters a-y and digits stand for themselves, `z` is
 * `zz`, any other code point is `z`, its number of hex digits (1-6) and the digits. Prefix-free means a
 * text is a prefix of another exactly when its code is a prefix of the other's code, and no two texts
 * share a code (so `_` and accents can no longer merge words).
 */
export function codewords(text: string): string[] {
  const out: string[] = [];
  for (const ch of text) {
    if (/^[0-9a-y]$/.test(ch)) out.push(ch);
    else if (ch === 'z') out.push('zz');
    else {
      const hex = (ch.codePointAt(0) as number).toString(16);
      out.push(`z${hex.length}${hex}`);
    }
  }
  return out;
}

/** Every token starts with the number of the field it came from, so one array serves all fields. */
export function fieldTag(slot: number): string {
  return `${slot}${TAG_END}`;
}

/** A token no longer than TOKEN_MAX: long ones keep a prefix of their code and a hash of the whole. */
function fitToken(tag: string, units: readonly string[]): string {
  const full = tag + units.join('');
  if (full.length <= TOKEN_MAX) return full;
  let kept = tag;
  for (const u of units) {
    if (kept.length + u.length > TOKEN_KEEP) break;
    kept += u;
  }
  return `${kept}${HASH_MARK}${createHash('sha256').update(full).digest('hex').slice(0, 16)}`;
}

/** The token of one word of a text field. */
export function wordToken(slot: number, word: string): string {
  return fitToken(fieldTag(slot), codewords(word));
}

/** The token of two adjacent words of a text field. */
export function pairToken(slot: number, first: string, second: string): string {
  return fitToken(fieldTag(slot), [...codewords(first), PAIR_SEPARATOR, ...codewords(second)]);
}

/** The stored prefixes of a word: its first 1 to STORED_PREFIX_CHARS characters. */
export function storedPrefixTokens(slot: number, word: string): string[] {
  const units = codewords(word);
  const tag = fieldTag(slot);
  const out: string[] = [];
  for (let n = 1; n <= Math.min(STORED_PREFIX_CHARS, units.length); n++) out.push(tag + units.slice(0, n).join(''));
  return out;
}

/** Whether a prefix is short enough to be one of the stored prefix tokens. */
export function isStoredPrefix(prefix: string): boolean {
  return [...prefix].length <= STORED_PREFIX_CHARS;
}

function prefixPattern(tag: string, units: readonly string[]): string {
  const pattern = tag + units.join('');
  if (pattern.length > PREFIX_MAX) {
    throw AppError.invalid(
      'A prefix search (word*) is too long for the Typesense search backend: use fewer characters before the *',
    );
  }
  return `${pattern}*`;
}

/** A Typesense prefix filter value matching the words of a field that start with `prefix`. */
export function wordPrefixPattern(slot: number, prefix: string): string {
  return prefixPattern(fieldTag(slot), codewords(prefix));
}

/** A Typesense prefix filter value matching `first` followed by a word starting with `prefix`. */
export function pairPrefixPattern(slot: number, first: string, prefix: string): string {
  return prefixPattern(fieldTag(slot), [...codewords(first), PAIR_SEPARATOR, ...codewords(prefix)]);
}

/** The token of a stored prefix (see storedPrefixTokens). */
export function storedPrefixToken(slot: number, prefix: string): string {
  return fieldTag(slot) + codewords(prefix).join('');
}

/** The words of a phrase as one code: each word's codewords, PAIR_SEPARATOR between two words. */
function phraseUnits(words: readonly string[]): string[] {
  return words.flatMap((w, i) => (i === 0 ? codewords(w) : [PAIR_SEPARATOR, ...codewords(w)]));
}

/** Shortest phrase stored as runs (see runTokens): shorter ones are words and pairs. */
export const RUN_MIN_WORDS = 3;

/**
 * The tokens of every run of RUN_MIN_WORDS or more words that ends the value: from each word to the
 * last. A phrase of three or more words is in the value exactly when one run is the
 * phrase or starts with the phrase and PAIR_SEPARATOR, which a Typesense prefix filter can test as long
 * as the pattern fits in what a token keeps (see runPatterns). Adjacent pairs alone could not: a record
 * holding "new york" and "york city" apart held every pair of "new york city".
 */
export function runTokens(slot: number, words: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i + RUN_MIN_WORDS <= words.length; i++)
    out.push(fitToken(fieldTag(slot), phraseUnits(words.slice(i))));
  return out;
}

/**
 * Filter values that find a phrase of RUN_MIN_WORDS or more words among the runs of a field: `whole`
 * matches a run that is the phrase, `longer` (a prefix pattern) one that goes on with more words. With
 * `prefix` the last word only has to start so, and only `longer` is needed (its pattern ends inside a word).
 * A phrase whose code exceeds what a stored token keeps cannot be tested exactly and is refused.
 */
export function runPatterns(
  slot: number,
  words: readonly string[],
  prefix: boolean,
): { whole: string | undefined; longer: string } {
  const units = phraseUnits(words);
  const tag = fieldTag(slot);
  const longerUnits = prefix ? units : [...units, PAIR_SEPARATOR];
  if ((tag + longerUnits.join('')).length > PREFIX_MAX) {
    throw AppError.invalid(
      'A phrase of three or more words is too long for the Typesense search backend: use fewer or shorter words in the quotes',
    );
  }
  return { whole: prefix ? undefined : fitToken(tag, units), longer: `${tag}${longerUnits.join('')}*` };
}

/** Tokens of one text value: its words, adjacent pairs, runs of three or more words and stored prefixes. */
export function textTokens(
  slot: number,
  words: readonly string[],
): { words: string[]; pairs: string[]; runs: string[]; prefixes: string[] } {
  const pairs: string[] = [];
  for (let i = 0; i + 1 < words.length; i++) pairs.push(pairToken(slot, words[i], words[i + 1]));
  return {
    words: words.map((w) => wordToken(slot, w)),
    pairs,
    runs: runTokens(slot, words),
    prefixes: words.flatMap((w) => storedPrefixTokens(slot, w)),
  };
}

export const INT64_MIN = -(2n ** 63n);
export const INT64_MAX = 2n ** 63n - 1n;
/** The smallest key: Typesense sorts a missing value as INT64_MIN, so a key must stay above it. */
export const KEY_MIN = INT64_MIN + 1n;

function clampKey(k: bigint): bigint {
  if (k < KEY_MIN) return KEY_MIN;
  if (k > INT64_MAX) return INT64_MAX;
  return k;
}

/**
 * The key of an integer value: the value itself. INT64_MIN, the one value Typesense reserves, becomes
 * INT64_MIN + 1; the two differ in sort order only, since no query number can tell them apart (both
 * are -2^63 as doubles).
 */
export function integerKey(value: bigint): bigint {
  return clampKey(value);
}

/**
 * The key of a double: its IEEE-754 bits as a signed integer, with the magnitude bits of negative
 * numbers flipped, so keys compare as the numbers do. -0 is 0, as the embedded engine compares and
 * sorts them.
 */
export function doubleKey(value: number): bigint {
  if (!Number.isFinite(value)) throw AppError.internal(`Non-finite number ${value} has no key`);
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, value === 0 ? 0 : value);
  const bits = view.getBigInt64(0);
  return bits < 0n ? bits ^ 0x7fffffffffffffffn : bits;
}

/** The key of a date: microseconds since the epoch, the embedded engine's own precision. */
export function dateKey(epochMicros: bigint): bigint {
  return clampKey(epochMicros);
}

export function booleanKey(value: boolean): bigint {
  return value ? 1n : 0n;
}

/** The keys a comparison accepts: a closed range (null: unbounded on that side), or none at all. */
export type KeyRange = { lo: bigint | null; hi: bigint | null } | 'none';

function range(op: CompareOp, at: bigint): KeyRange {
  switch (op) {
    case 'eq':
      return { lo: at, hi: at };
    case 'gt':
      return { lo: at + 1n, hi: null };
    case 'gte':
      return { lo: at, hi: null };
    case 'lt':
      return { lo: null, hi: at - 1n };
    case 'lte':
      return { lo: null, hi: at };
  }
}

/** Bounds outside the int64 keys are dropped (unbounded) or make the range empty. */
function clampRange(r: KeyRange): KeyRange {
  if (r === 'none') return r;
  if ((r.lo !== null && r.lo > INT64_MAX) || (r.hi !== null && r.hi < INT64_MIN)) return 'none';
  const lo = r.lo === null || r.lo <= INT64_MIN ? null : clampKey(r.lo);
  const hi = r.hi === null || r.hi >= INT64_MAX ? null : clampKey(r.hi);
  if (lo !== null && hi !== null && lo > hi) return 'none';
  return { lo, hi };
}

/** Keys of a number field (doubles) that compare to `value` as `op` does. */
export function doubleRange(op: CompareOp, value: number): KeyRange {
  return range(op, doubleKey(value));
}

function nextDouble(x: number, up: boolean): number {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x);
  const bits = view.getBigInt64(0);
  // Only called on large integral values, which are never zero: stepping the bits steps the magnitude.
  view.setBigInt64(0, x > 0 === up ? bits + 1n : bits - 1n);
  return view.getFloat64(0);
}

/** The integers whose nearest double is `x` (an integral double): [lo, hi]. */
function integersRoundingTo(x: number): { lo: bigint; hi: bigint } {
  const at = BigInt(x);
  if (Math.abs(x) <= Number.MAX_SAFE_INTEGER) return { lo: at, hi: at };
  // Halfway to each neighbour; a halfway integer belongs to x when rounding (ties to even) picks x.
  const midUp = (at + BigInt(nextDouble(x, true))) / 2n;
  const midDown = (at + BigInt(nextDouble(x, false))) / 2n;
  return { lo: Number(midDown) === x ? midDown : midDown + 1n, hi: Number(midUp) === x ? midUp : midUp - 1n };
}

/**
 * Keys of an integer field that compare to `value` as `op` does. The embedded engine compares an
 * integer column with a query number as doubles (BIGINT against DOUBLE), so this is the set of integers
 * whose nearest double compares so: `x > 2.5` is `x >= 3`, `x <= 2.5` is `x <= 2`, `x = 2.5` is
 * nothing, and beyond 2^53 a number covers every integer that rounds to it.
 */
export function integerRange(op: CompareOp, value: number): KeyRange {
  if (!Number.isFinite(value)) throw AppError.internal(`Non-finite bound ${value}`);
  if (!Number.isInteger(value)) {
    const below = BigInt(Math.floor(value));
    switch (op) {
      case 'eq':
        return 'none';
      case 'gt':
      case 'gte':
        return clampRange({ lo: below + 1n, hi: null });
      case 'lt':
      case 'lte':
        return clampRange({ lo: null, hi: below });
    }
  }
  const { lo, hi } = integersRoundingTo(value);
  switch (op) {
    case 'eq':
      return clampRange({ lo, hi });
    case 'gt':
      return clampRange({ lo: hi + 1n, hi: null });
    case 'gte':
      return clampRange({ lo, hi: null });
    case 'lt':
      return clampRange({ lo: null, hi: lo - 1n });
    case 'lte':
      return clampRange({ lo: null, hi });
  }
}

/** Keys of a date field: the engine compares timestamps exactly, and query dates are whole milliseconds. */
export function dateRange(op: CompareOp, epochMs: number): KeyRange {
  if (!Number.isInteger(epochMs)) throw AppError.internal(`Date bound ${epochMs} is not a whole millisecond`);
  return clampRange(range(op, BigInt(epochMs) * 1000n));
}

export function booleanRange(op: CompareOp, value: boolean): KeyRange {
  return clampRange(range(op, booleanKey(value)));
}

/**
 * The only token of `__q`, which every document holds: a ranked search's `q` starts with it, so
 * Typesense's dropping of words from the right always ends on a search every filtered record matches
 * (typesense-ranking.ts). No word's code can be it: `z` is followed by `z` or a digit 1-6 in a codeword.
 */
export const EVERY_RECORD_TOKEN = 'z7';

/** A word as Typesense's `q` and the `t{slot}` text fields hold it (no field tag: the field is the slot's own). */
export function rankToken(word: string): string {
  return fitToken('', codewords(word));
}

/** The double whose key (doubleKey) this is. */
export function doubleFromKey(key: bigint): number {
  const view = new DataView(new ArrayBuffer(8));
  view.setBigInt64(0, key < 0n ? key ^ 0x7fffffffffffffffn : key);
  return view.getFloat64(0);
}

/** Typesense keeps the first 255 bytes of a facet value (include/facet_index.h MAX_FACET_VAL_LEN). */
export const FACET_VALUE_MAX_BYTES = 255;
/** UTF-8 bytes of a long text's label kept before its hash. */
const FACET_LABEL_BYTES = 200;
const utf8 = new TextEncoder();

/**
 * A text value as its facet field holds it: `v` and the value when Typesense keeps it whole, else `h`,
 * the hash of the whole value and the label (the value cut at a character boundary, with `…`), so two
 * long values that begin alike are still two facet values. The first letter tells the two apart.
 */
export function facetText(value: string): string {
  if (utf8.encode(value).length + 1 <= FACET_VALUE_MAX_BYTES) return `v${value}`;
  let label = '';
  let bytes = 0;
  for (const ch of value) {
    const n = utf8.encode(ch).length;
    if (bytes + n > FACET_LABEL_BYTES) break;
    label += ch;
    bytes += n;
  }
  return `h${createHash('sha256').update(value).digest('hex').slice(0, 16)}${label}…`;
}

/** The value (or a long value's label) a facet field's value stands for. */
export function fromFacetText(stored: string): string {
  if (stored.startsWith('v')) return stored.slice(1);
  if (stored.startsWith('h')) return stored.slice(17);
  throw AppError.internal(`Unexpected Typesense facet value ${JSON.stringify(stored.slice(0, 40))}`);
}
