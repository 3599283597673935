import { AppError } from '@quarry/errors';
import { querySyntaxError, type QueryText } from './query-scanner';

/** `+` keeps, `-` and `!` negate, written directly before a term, phrase, field or "(". */
export type Sign = '+' | '-' | '!';
export type OperatorWord = 'AND' | 'OR' | 'NOT' | '&&' | '||';

/** One end of a range as written (escapes still in); `at` is its 0-based position. */
export interface Bound {
  raw: string;
  at: number;
}

export type Token =
  | { kind: 'open'; at: number }
  | { kind: 'close'; at: number }
  /** A sign directly before "(" (or before "(Field Name):"), as in -(a OR b). */
  | { kind: 'sign'; sign: Sign; at: number }
  /** `Field:` or `(Field With Spaces):`; `name` is unescaped, without the sign; `colon` is where ":" is. */
  | { kind: 'field'; name: string; sign: Sign | null; at: number; colon: number }
  /** An unquoted word, escapes still in `raw`; `operator` when it is AND, OR, NOT, && or || on its own. */
  /** `boost`: `^n` after it (absent: 1); `fuzzy`: the edits `~n` allows (absent: an exact word). */
  | {
      kind: 'word';
      raw: string;
      sign: Sign | null;
      operator: OperatorWord | null;
      at: number;
      boost?: number;
      fuzzy?: number;
    }
  | { kind: 'phrase'; raw: string; sign: Sign | null; at: number; boost?: number }
  | { kind: 'range'; low: Bound; high: Bound; lowInclusive: boolean; highInclusive: boolean; at: number };

const OPERATORS: ReadonlySet<string> = new Set<OperatorWord>(['AND', 'OR', 'NOT', '&&', '||']);
/**
 * What a backslash escapes in a word; before anything else the backslash is an ordinary character. Every
 * blank can be escaped, so any text (a key holding a line feed or a tab) can be written as a value.
 */
const ESCAPABLE = new Set('+-!(){}[]^"?:\\&|\'/~* \t\r\n\f');
/** The query language's blanks; other Unicode spaces are part of words, as they always were. */
const BLANKS = new Set(' \t\r\n\f');
/** Characters that end a word. A range bound may also hold ":" (2001-01-14T09:30). */
const WORD_STOP = new Set(' \t\r\n\f:{}()"/^~[]');
const BOUND_STOP = new Set(' \t\r\n\f{}()"/^~[]');
/** After these an operator word is an operator; `AND:` is a field and `AND^2` a boosted word. */
const OPERATOR_END = new Set(' \t\r\n\f()"');
const SIGNS = new Set('+-!');

/** The most edits a fuzzy word may allow (Lucene's limit: beyond it nearly every short word matches). */
export const MAX_FUZZY_EDITS = 2;
/** The largest boost: past it the sums of scores lose the digits that order records. */
export const MAX_BOOST = 1_000_000;

const RANGE_SHAPE = 'a range is written [low TO high], with { or } for an exclusive end';

export const unescapeQueryText = (s: string): string => s.replace(/\\([\s\S])/g, '$1');

const isDigit = (ch: string | undefined) => ch !== undefined && ch >= '0' && ch <= '9';

/**
 * Splits a query into tokens in one left-to-right pass; every loop moves forward and no character is
 * looked at more than a bounded number of times (the one look-ahead, for `(Field Name):`, stops at the
 * next parenthesis), so the cost is linear in the length whatever the input.
 */
export function tokenizeQuery(q: QueryText): Token[] {
  return new Lexer(q).run();
}

class Lexer {
  private readonly tokens: Token[] = [];
  private readonly text: string;
  private readonly end: number;
  private i: number;

  constructor(q: QueryText) {
    this.text = q.text;
    this.end = q.end;
    this.i = q.start;
  }

  run(): Token[] {
    const { text } = this;
    while (this.i < this.end) {
      const at = this.i;
      const ch = text[at];
      const next = text[at + 1];
      if (BLANKS.has(ch)) {
        this.i++;
      } else if (ch === '(') {
        if (!this.fieldGroup(at)) {
          this.tokens.push({ kind: 'open', at });
          this.i++;
        }
      } else if (ch === ')') {
        this.tokens.push({ kind: 'close', at });
        this.i++;
      } else if (SIGNS.has(ch) && next === '(' && at + 1 < this.end) {
        this.tokens.push({ kind: 'sign', sign: ch as Sign, at });
        this.i++;
      } else if (ch === '"' || (SIGNS.has(ch) && next === '"' && at + 1 < this.end)) {
        this.phrase(ch === '"' ? null : (ch as Sign), at);
      } else if (ch === '/' || (SIGNS.has(ch) && next === '/' && at + 1 < this.end)) {
        throw AppError.invalid(`Regular expressions are not supported (position ${at + 1})`);
      } else if (ch === '[' || ch === '{') {
        this.range(at);
      } else if (ch === '^' || ch === '~') {
        throw querySyntaxError(at, `"${ch}" must follow a word or a phrase`);
      } else if (ch === ':') {
        throw querySyntaxError(at, '":" must follow a field name');
      } else if (ch === ']' || ch === '}') {
        throw querySyntaxError(at, `"${ch}" closes no range`);
      } else {
        this.word(at);
      }
    }
    return this.tokens;
  }

  /** `(Field With Spaces):` — the name may hold anything but ( ) " : and backslash. */
  private fieldGroup(at: number): boolean {
    const { text, end } = this;
    let k = at + 1;
    while (k < end && !'()":\\'.includes(text[k])) k++;
    if (k >= end || text[k] !== ')' || k === at + 1) return false;
    let colon = k + 1;
    while (colon < end && /\s/.test(text[colon])) colon++;
    if (colon >= end || text[colon] !== ':') return false;
    const inner = text.slice(at + 1, k);
    const name = inner.trim();
    if (name === '') return false;
    // A sign before it came as its own token: -(Field Name):x.
    this.tokens.push({ kind: 'field', name, sign: null, at: at + 1 + inner.indexOf(name), colon });
    this.i = this.skipBlanks(colon + 1);
    return true;
  }

  private skipBlanks(from: number): number {
    let k = from;
    while (k < this.end && BLANKS.has(this.text[k])) k++;
    return k;
  }

  /** Index just past a run of word (or bound) characters starting at `from`. */
  private runOf(from: number, stop: ReadonlySet<string>): number {
    const { text, end } = this;
    let k = from;
    while (k < end) {
      if (text[k] === '\\' && k + 1 < end && ESCAPABLE.has(text[k + 1])) k += 2;
      else if (stop.has(text[k])) break;
      else k++;
    }
    return k;
  }

  private word(at: number): void {
    const { text } = this;
    const stop = this.runOf(at, WORD_STOP);
    const whole = text.slice(at, stop);
    const signed = whole.length > 1 && SIGNS.has(whole[0]);
    const sign = signed ? (whole[0] as Sign) : null;
    const raw = signed ? whole.slice(1) : whole;
    const after = text[stop];
    if (after === ':' && stop < this.end) {
      this.tokens.push({ kind: 'field', name: unescapeQueryText(raw), sign, at, colon: stop });
      this.i = this.skipBlanks(stop + 1);
      return;
    }
    let k = stop;
    let fuzzy: number | undefined;
    if (after === '~' && stop < this.end) [k, fuzzy] = this.fuzzy(stop, at);
    const boosted = text[k] === '^' && k < this.end;
    const boost = boosted ? this.boost(k) : undefined;
    this.i = boost ? boost.end : k;
    const alone = stop >= this.end || OPERATOR_END.has(after);
    const operator = !boosted && fuzzy === undefined && alone && OPERATORS.has(whole) ? (whole as OperatorWord) : null;
    this.tokens.push({
      kind: 'word',
      raw,
      sign,
      operator,
      at,
      ...(boost ? { boost: boost.value } : {}),
      ...(fuzzy !== undefined ? { fuzzy } : {}),
    });
  }

  /**
   * `~`, `~1`, `~2` after a word: the edits a fuzzy word allows (`~` alone is 2, as in Lucene; `~0` is the
   * word itself). Lucene's old similarity fractions (`~0.8`) and more than 2 edits are refused.
   */
  private fuzzy(tilde: number, at: number): [number, number] {
    const { text, end } = this;
    let k = tilde + 1;
    while (k < end && isDigit(text[k])) k++;
    const digits = text.slice(tilde + 1, k);
    if (text[k] === '.' && k < end)
      throw AppError.invalid(
        `A fuzzy word takes ~1 or ~2 edits, not a similarity (position ${at + 1}): write word~1 or word~2`,
      );
    if (digits === '') return [k, MAX_FUZZY_EDITS];
    const edits = Number(digits);
    if (edits > MAX_FUZZY_EDITS)
      throw AppError.invalid(
        `A fuzzy word allows at most ${MAX_FUZZY_EDITS} edits, not ${digits} (position ${at + 1})`,
      );
    return [k, edits];
  }

  private phrase(sign: Sign | null, at: number): void {
    const { text } = this;
    const open = sign ? at + 1 : at;
    let k = open + 1;
    // The scanner has checked that the quote closes.
    while (k < this.end && text[k] !== '"') k += text[k] === '\\' ? 2 : 1;
    const raw = text.slice(open + 1, k);
    k++;
    if (text[k] === '~') {
      // "a b"~0 asks for the words side by side, which is what a phrase is: accepted, as it always was.
      let z = k + 1;
      while (text[z] === '0' && z < this.end) z++;
      if (z === k + 1 || isDigit(text[z]))
        throw AppError.invalid(`Proximity search (~) is not supported (position ${at + 1})`);
      k = z;
    }
    const boost = text[k] === '^' && k < this.end ? this.boost(k) : undefined;
    this.i = boost ? boost.end : k;
    this.tokens.push({ kind: 'phrase', raw, sign, at, ...(boost ? { boost: boost.value } : {}) });
  }

  /** `^2`, `^0.5`: a relevance boost, the factor of what the clause adds to a record's score. */
  private boost(caret: number): { end: number; value: number } {
    const { text, end } = this;
    let k = caret + 1;
    if (!isDigit(text[k]) || k >= end) throw querySyntaxError(caret, '"^" must be followed by a number, as in word^2');
    while (k < end && isDigit(text[k])) k++;
    if (text[k] === '.' && k + 1 < end && isDigit(text[k + 1])) {
      k++;
      while (k < end && isDigit(text[k])) k++;
    }
    const value = Number(text.slice(caret + 1, k));
    if (!Number.isFinite(value) || value > MAX_BOOST)
      throw querySyntaxError(caret, `a boost is at most ${MAX_BOOST}, as in word^2`);
    return { end: k, value };
  }

  private range(at: number): void {
    const { text, end } = this;
    const bound = (from: number): Bound => {
      const stop = this.runOf(from, BOUND_STOP);
      if (stop === from) throw querySyntaxError(from, RANGE_SHAPE);
      return { raw: text.slice(from, stop), at: from };
    };
    const low = bound(at + 1);
    let k = this.skipBlanks(low.at + low.raw.length);
    if (text.slice(k, k + 2) !== 'TO' || k + 2 > end) throw querySyntaxError(k, RANGE_SHAPE);
    k += 2;
    if (k >= end || !BLANKS.has(text[k])) throw querySyntaxError(k, RANGE_SHAPE);
    const high = bound(this.skipBlanks(k));
    k = high.at + high.raw.length;
    const close = text[k];
    if (k >= end || (close !== ']' && close !== '}')) throw querySyntaxError(k, RANGE_SHAPE);
    this.tokens.push({ kind: 'range', low, high, lowInclusive: text[at] === '[', highInclusive: close === ']', at });
    this.i = k + 1;
  }
}
