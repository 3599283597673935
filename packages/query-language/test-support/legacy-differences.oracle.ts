/**
 * TEST-ONLY: the deliberate differences between the hand-written parser and the lucene-based one it
 * replaced (legacy-lucene-parser.oracle.ts). Each names a construct the old parser got wrong and says
 * what changed; `applies` recognises the construct in a query, so the equivalence test can require that
 * every query on which the two disagree shows one of them, and nothing else.
 */
import { tokenizeQuery, type Token } from '../src/query-lexer';
import { scanQuery, trimmedQuery } from '../src/query-scanner';

export interface Outcome {
  ok: boolean;
  /** JSON of the QueryNode, or the error detail. */
  value: string;
}

export interface LegacyDifference {
  name: string;
  /** Old behaviour, new behaviour, and why. */
  why: string;
  /** A query showing it; the equivalence test checks the two parsers disagree on it. */
  example: string;
  applies(query: string, tokens: readonly Token[] | null, legacy: Outcome, current: Outcome): boolean;
}

const isBlank = (ch: string | undefined) => ch !== undefined && /\s/.test(ch);
const isOperator = (t: Token | undefined): t is Extract<Token, { kind: 'word' }> =>
  t?.kind === 'word' && t.operator !== null;
const wordEnd = (t: Extract<Token, { kind: 'word' }>) => t.at + (t.sign ? 1 : 0) + t.raw.length;

type Op = { operator: string; at: number; end: number };
interface Run {
  run: Op[];
  leading: boolean;
  next: Token | undefined;
}

/**
 * Runs of operator words as the old parser saw them: it had rewritten "-(" after a blank or "(" into
 * "NOT (" (and dropped "+"), so such a sign counts as a NOT here. `leading`: the run starts a group.
 */
function operatorRuns(query: string, tokens: readonly Token[]): Run[] {
  const runs: Run[] = [];
  const asOp = (k: number): Op | null => {
    const t = tokens[k];
    if (isOperator(t)) return { operator: t.operator as string, at: t.at, end: wordEnd(t) };
    // Not before "(Field Name):", which the old parser had already turned into a signed field.
    const rewritten =
      t?.kind === 'sign' &&
      t.sign === '-' &&
      tokens[k + 1]?.kind === 'open' &&
      (t.at === 0 || /[\s(]/.test(query[t.at - 1]));
    return rewritten ? { operator: 'NOT', at: t.at, end: t.at + 1 } : null;
  };
  for (let i = 0; i < tokens.length; i++) {
    const first = asOp(i);
    if (!first) continue;
    const prev = tokens[i - 1];
    // An operator word right after `Field:` is that field's value.
    if (prev?.kind === 'field' && tokens[i].kind === 'word') continue;
    const run = [first];
    for (let op = asOp(i + 1); op; op = asOp(i + 1)) {
      run.push(op);
      i++;
    }
    runs.push({ run, leading: prev === undefined || prev.kind === 'open', next: tokens[i + 1] });
  }
  return runs;
}

export function lexForClassification(query: string): Token[] | null {
  try {
    const q = trimmedQuery(query);
    scanQuery(q);
    return tokenizeQuery(q);
  } catch {
    return null;
  }
}

export const LEGACY_DIFFERENCES: readonly LegacyDifference[] = [
  {
    name: 'an escaped wildcard, or an escaped first character',
    why: 'The old compiler unescaped a word before looking at it, so `\\*` was every record (or "the field exists"), `acme\\*` a prefix search, `\\>m` a comparison and `\\=x` an exact match: an escaped value (a drill query\'s key, a realm filled from a token\'s claim) could match far more than its text. Now a word with an escaped wildcard or an escaped first character is that text, read as a phrase is.',
    example: 'Title:\\>m',
    applies: (_query, tokens) =>
      tokens !== null &&
      tokens.some(
        (t) => t.kind === 'word' && (t.raw.startsWith('\\') || (!/^[=<>@]/.test(t.raw) && /\\[*?]/.test(t.raw))),
      ),
  },
  {
    name: '*:* inside a larger query',
    why: 'The old compiler read `*:*` as every record only when it was the whole query; beside anything else (`* OR *:*`, `NOT *:*`) it looked for a field named "*" and refused the query. Now `*:*` is every record wherever it stands.',
    example: '* OR *:*',
    applies: (_query, tokens, legacy) =>
      tokens !== null &&
      !legacy.ok &&
      legacy.value.startsWith('Unknown field "*"') &&
      tokens.some((t) => t.kind === 'field' && t.name === '*'),
  },
  {
    name: 'an escaped blank ending the query',
    why: 'The old scanner trimmed every trailing blank, the escaped one too, so `Title:=alpha\\ ` (the drill query of the key "alpha ") looked for "alpha\\". Now a blank after an odd run of backslashes is part of the value.',
    example: 'Title:=alpha\\ ',
    applies: (query) => /(^|[^\\])(\\\\)*\\\s\s*$/.test(query),
  },
  {
    name: 'a backslash before a tab, a line feed or a carriage return',
    why: 'The old lexer escaped only the space, so a backslash before any other blank was a character of its own and the blank split the word: a key holding a tab or a line feed had no query that could name it. Now every blank escapes.',
    example: 'Title:=a\\\tb',
    applies: (query) => /\\[\t\r\n\f]/.test(query),
  },
  {
    name: 'NOT between two operands',
    why: 'The old compiler read `a NOT b` (and `a && NOT b`, `a AND  NOT b` with two blanks, `a -(b)`, leading `AND NOT a`) as AND without the NOT; only a leading NOT and the exact spellings "AND NOT"/"OR NOT" negated. Now every NOT negates what follows it.',
    example: 'Title:a NOT Title:b',
    applies: (query, tokens) =>
      tokens !== null &&
      operatorRuns(query, tokens).some(({ run, leading }) => {
        if (!run.some((t) => t.operator === 'NOT')) return false;
        if (leading) return !(run.length === 1);
        const [first, second] = run;
        return !(
          run.length === 2 &&
          (first.operator === 'AND' || first.operator === 'OR') &&
          second.operator === 'NOT' &&
          query.slice(first.end, second.at) === ' '
        );
      }),
  },
  {
    name: 'several operator words at the start of a group',
    why: 'After a leading operator the old grammar took the next operator word for a search word (`NOT NOT a` searched for "not"); now a run of operators is read as operators.',
    example: 'AND OR Title:a',
    applies: (query, tokens) =>
      tokens !== null && operatorRuns(query, tokens).some(({ run, leading }) => leading && run.length > 1),
  },
  {
    name: 'operator word glued to a parenthesis or a quote',
    why: 'The old grammar needed a blank after AND/OR/NOT/&&/||, so `a OR(b)` searched for the word "or" and `NOT(a)` for "not"; now ( ) and " end an operator word as a blank does.',
    example: 'Title:a OR(Title:b)',
    applies: (query, tokens) =>
      tokens !== null && tokens.some((t) => isOperator(t) && '()"'.includes(query[wordEnd(t)] ?? ' ')),
  },
  {
    name: 'AND NOT / OR NOT glued to the next word',
    why: 'The old grammar matched "AND NOT" as one operator before checking the blank after it, so in `a AND NOTb` the AND became a search word; now AND is the operator and NOTb the word.',
    example: 'Title:a AND NOTb',
    applies: (query, tokens) =>
      tokens !== null &&
      tokens.some(
        (t) =>
          isOperator(t) &&
          (t.operator === 'AND' || t.operator === 'OR') &&
          /^ NOT[^\s]/.test(query.slice(wordEnd(t), wordEnd(t) + 5)),
      ),
  },
  {
    name: 'dangling operator before ")" or after ")" / a phrase at the end',
    why: 'The old grammar silently dropped an operator with nothing after it inside parentheses (`(a AND )`) or glued to the end (`(a)AND`); now it is the same "nothing follows AND" error as at the end of the query.',
    example: '(Title:a AND )',
    applies: (query, tokens) =>
      tokens !== null &&
      operatorRuns(query, tokens).some(
        ({ run, next }) => next?.kind === 'close' || (next === undefined && !isBlank(query[run[0].at - 1])),
      ),
  },
  {
    name: '"!" negates',
    why: 'The old compiler ignored a "!" prefix (`!a` meant a), did not strip it from field names (`!Title:a` looked for a field "!Title") and refused `!(a)`; now "!" negates like "-".',
    example: '!Title:a',
    applies: (_q, tokens) => tokens !== null && tokens.some((t) => 'sign' in t && t.sign === '!'),
  },
  {
    name: 'sign on a field and on its value, or on a field group',
    why: 'The old compiler kept only the sign before the field (`+Title:-a` meant Title:a), took `-Title:(a)` for a field named "-Title", and refused `Title:-(a)`; now both signs count and a signed field group is negated.',
    example: '-Title:-a',
    applies: (_q, tokens) =>
      tokens !== null &&
      tokens.some((t, i) => {
        if (t.kind !== 'field') return false;
        const sign = t.sign ?? (tokens[i - 1]?.kind === 'sign' ? (tokens[i - 1] as { sign: string }).sign : null);
        const v = tokens[i + 1];
        if (v?.kind === 'sign') return true;
        return sign !== null && (v?.kind === 'open' || (v !== undefined && 'sign' in v && v.sign !== null));
      }),
  },
  {
    name: 'signed group where the old text rewrite misfired',
    why: 'The old parser rewrote "-(" into "NOT (" on the raw text, only after a blank or "(" and blind to escapes, so `"a"-(b)` fell apart into a search for "-" while `\\(-(b)` (an escaped parenthesis) became a search for "not"; now a sign is a sign where a term starts, and nowhere else.',
    example: '"x"-(Title:a)',
    applies: (query, tokens) => {
      if (tokens === null) return false;
      const signs = new Set(tokens.filter((t) => t.kind === 'sign' && t.sign !== '!').map((t) => t.at));
      // The old rewrite's own condition, quote tracking included.
      const rewritten = new Set<number>();
      let inQuote = false;
      for (let i = 0; i < query.length; i++) {
        if (query[i] === '"' && query[i - 1] !== '\\') inQuote = !inQuote;
        if (
          !inQuote &&
          (query[i] === '-' || query[i] === '+') &&
          query[i + 1] === '(' &&
          (i === 0 || /[\s(]/.test(query[i - 1]))
        )
          rewritten.add(i);
      }
      const start = query.length - query.trimStart().length;
      return [...signs].some((at) => !rewritten.has(at) && at !== start) || [...rewritten].some((at) => !signs.has(at));
    },
  },
  {
    name: 'boost with a fraction',
    why: 'The old grammar read a boost as 0.x or an integer, so `a^1.5` was a^1 AND ".5" (a search for "5"); now any number is one boost, ignored as before.',
    example: 'Title:a^1.5',
    applies: (query) => /\^(?!0\.)\d+\.\d/.test(query),
  },
  {
    name: '"(Field Name):" not at the start of a term',
    why: 'The old parser rewrote "(name):" into "name:" everywhere, even glued to a word (`a(Title):b` became the field "aTitle"), inside phrases and inside ranges; now it is a field only where a term starts.',
    example: 'x(Title):a',
    applies: (query, tokens) => {
      const fieldColons = new Set(
        (tokens ?? []).filter((t) => t.kind === 'field').map((t) => (t as { colon: number }).colon),
      );
      const wordEnds = new Set(
        (tokens ?? []).filter((t) => t.kind === 'word').map((t) => wordEnd(t as Extract<Token, { kind: 'word' }>)),
      );
      for (const m of query.matchAll(/\(([^()":\\]+)\)(\s*):/g)) {
        if (!fieldColons.has(m.index + m[0].length - 1)) return true;
        // Glued to the word before it, the old rewrite made one field name of both.
        if (wordEnds.has(m.index)) return true;
      }
      return false;
    },
  },
  {
    name: 'backslash before an ordinary character in a phrase',
    why: 'The old grammar refused `"C:\\Users"` (a backslash escapes only Lucene syntax characters); now such a backslash is part of the phrase, as it is in a word.',
    example: '"a\\b"',
    applies: (_q, tokens) =>
      tokens !== null && tokens.some((t) => t.kind === 'phrase' && /\\[^+\-!(){}[\]^"?:\\&|'/~* ]/.test(t.raw)),
  },
  {
    name: 'escaped blank before a final operator word',
    why: 'The old check for a dangling operator ran on the text, so `x\\ OR` (an escaped blank inside one word) was refused as "nothing follows OR"; now it is the word "x OR".',
    example: 'x\\ OR',
    applies: (query) => /\\[\s](AND|OR|NOT|&&|\|\||!)\s*$/.test(query),
  },
  {
    name: 'values outside what the engines hold',
    why: 'Numbers that overflow to Infinity (1e999) and dates outside years 1-9999 (NOW-99999999999YEARS) compiled to nodes that failed later as internal errors; now they are a 400 naming the value.',
    example: 'Year:1e999',
    applies: (_q, _t, legacy, current) => legacy.ok && !current.ok && /outside the supported range/.test(current.value),
  },
  {
    name: 'fuzzy words',
    why: 'The old parser refused `word~`, `word~1` and `word~2` ("Fuzzy search is not supported"); now they are fuzzy words (Damerau–Levenshtein, resolved against the version\'s words), and `~3` or a similarity fraction is refused naming the limit.',
    example: 'Title:lvoe~1',
    applies: (_q, tokens, legacy, current) =>
      (tokens ?? []).some((t) => t.kind === 'word' && t.fuzzy !== undefined) ||
      (!legacy.ok && /Fuzzy search/.test(legacy.value) && !current.ok && /fuzzy word/.test(current.value)),
  },
  {
    name: 'boosts out of range',
    why: 'A boost was read and ignored, so `a^99999999` was `a`; boosts now scale scores, and one over 1,000,000 is refused.',
    example: 'Title:a^99999999',
    applies: (_q, _t, legacy, current) => legacy.ok && !current.ok && /boost is at most/.test(current.value),
  },
  {
    name: 'exact value: Field:=value',
    why: 'The old parser read `Title:=Star` as the words of "=Star" (and a number or date field refused it); now `:=` is the exact whole value (drill-through), and on numbers, dates and booleans the equality `:` already was.',
    example: 'Title:=Star',
    applies: (_q, tokens) =>
      (tokens ?? []).some((t, i) => t.kind === 'word' && t.raw.startsWith('=') && tokens?.[i - 1]?.kind === 'field'),
  },
];

export function legacyDifferenceOf(query: string, legacy: Outcome, current: Outcome): LegacyDifference | undefined {
  const tokens = lexForClassification(query);
  return LEGACY_DIFFERENCES.find((d) => d.applies(query, tokens, legacy, current));
}
