import { quoteInput } from '@quarry/errors';
import { unescapeQueryText, type Bound, type Sign, type Token } from './query-lexer';
import { querySyntaxError } from './query-scanner';

/**
 * A word whose escapes say "this very text": an escaped `*` or `?`, or an escaped first character (`\=`,
 * `\<`, `\>`, `\@`, `\*`). Such a word is read as a phrase is: never a wildcard, a comparison, an exact
 * match or a date part. escapeQueryText writes every value so (drill queries, realms filled from claims),
 * so a value holding `*`, `>m` or `=x` matches that text and nothing wider.
 */
function literalWord(raw: string): boolean {
  if (raw.startsWith('\\')) return true;
  // After a leading `=`, `<`, `>` or `@` the value is read as text anyway; an escaped wildcard there is text too.
  return !/^[=<>@]/.test(raw) && /\\[*?]/.test(raw);
}

/** A field as written; `at` (0-based) is where its name starts. */
export interface FieldRef {
  name: string;
  at: number;
}

/**
 * The parsed query, before fields are resolved. A group's clauses are kept flat with the operator that
 * joins each to the one before; the compiler applies NOT > AND > OR to them.
 */
export type QueryAst =
  | { kind: 'group'; field: FieldRef | null; clauses: Clause[] }
  /**
   * `text` is what the compiler reads: unescaped for a word, as written for a phrase. `boost` and `fuzzy`
   * as the lexer read them after it.
   */
  | {
      kind: 'term';
      field: FieldRef | null;
      text: string;
      quoted: boolean;
      at: number;
      boost?: number;
      fuzzy?: number;
    }
  | {
      kind: 'range';
      field: FieldRef | null;
      low: Bound;
      high: Bound;
      lowInclusive: boolean;
      highInclusive: boolean;
      at: number;
    };

export interface Clause {
  join: 'and' | 'or';
  negate: boolean;
  node: QueryAst;
}

type Operand = { node: QueryAst; negate: boolean };

function wordTerm(t: Extract<Token, { kind: 'word' }>, field: FieldRef | null): QueryAst {
  return {
    kind: 'term',
    field,
    text: unescapeQueryText(t.raw),
    quoted: literalWord(t.raw),
    at: t.at,
    ...(t.boost !== undefined ? { boost: t.boost } : {}),
    ...(t.fuzzy !== undefined ? { fuzzy: t.fuzzy } : {}),
  };
}

function phraseTerm(t: Extract<Token, { kind: 'phrase' }>, field: FieldRef | null): QueryAst {
  return {
    kind: 'term',
    field,
    text: t.raw,
    quoted: true,
    at: t.at,
    ...(t.boost !== undefined ? { boost: t.boost } : {}),
  };
}
type OperatorToken = Extract<Token, { kind: 'word' }> & { operator: string };

const negates = (sign: Sign | null) => sign === '-' || sign === '!';

/**
 * Recursive descent over the tokens of one query:
 *
 *   query    = sequence
 *   sequence = operators operand { operators operand }     (no operators between two operands: AND)
 *   operand  = "(" sequence ")" | sign "(" sequence ")" | field value | word | phrase | range
 *   value    = word | phrase | range | "(" sequence ")" | sign "(" sequence ")"
 *
 * Between two operands the first operator word decides AND or OR and each NOT negates what follows, so
 * `a AND NOT b`, `a NOT b` and `a OR NOT b` mean what they say. Recursion happens only at "(", whose
 * nesting the scanner has already bounded, so no input can exhaust the stack.
 */
export function parseTokens(tokens: readonly Token[], endAt: number): QueryAst {
  return new Parser(tokens, endAt).query();
}

class Parser {
  private i = 0;

  constructor(
    private readonly tokens: readonly Token[],
    private readonly endAt: number,
  ) {}

  query(): QueryAst {
    const ast = this.sequence(null);
    const rest = this.tokens[this.i];
    if (rest) throw querySyntaxError(rest.at, '")" has no matching "("');
    return ast;
  }

  private operators(): OperatorToken[] {
    const run: OperatorToken[] = [];
    for (let t = this.tokens[this.i]; t?.kind === 'word' && t.operator !== null; t = this.tokens[++this.i])
      run.push(t as OperatorToken);
    return run;
  }

  private sequence(field: FieldRef | null): QueryAst {
    const clauses: Clause[] = [];
    for (;;) {
      const run = this.operators();
      const next = this.tokens[this.i];
      if (next === undefined || next.kind === 'close') {
        const last = run[run.length - 1];
        if (last) throw querySyntaxError(last.at, `nothing follows ${last.operator}`);
        if (clauses.length === 0)
          throw querySyntaxError(next?.at ?? this.endAt, next ? 'empty parentheses' : 'the query ends too early');
        return { kind: 'group', field, clauses };
      }
      const first = run[0]?.operator;
      const join = clauses.length > 0 && (first === 'OR' || first === '||') ? 'or' : 'and';
      const nots = run.filter((t) => t.operator === 'NOT').length;
      const { node, negate } = this.operand();
      clauses.push({ join, negate: (nots % 2 === 1) !== negate, node });
    }
  }

  private take(): Token | undefined {
    return this.tokens[this.i++];
  }

  private group(open: Token, field: FieldRef | null): QueryAst {
    const ast = this.sequence(field);
    if (this.take()?.kind !== 'close') throw querySyntaxError(open.at, '"(" is never closed');
    return ast;
  }

  private operand(): Operand {
    const t = this.take();
    switch (t?.kind) {
      case 'open':
        return { node: this.group(t, null), negate: false };
      case 'sign':
        return this.signed(t.sign, null);
      case 'field':
        return this.fieldValue(t);
      case 'word':
        return { node: wordTerm(t, null), negate: negates(t.sign) };
      case 'phrase':
        return { node: phraseTerm(t, null), negate: negates(t.sign) };
      case 'range':
        return {
          node: {
            kind: 'range',
            field: null,
            low: t.low,
            high: t.high,
            lowInclusive: t.lowInclusive,
            highInclusive: t.highInclusive,
            at: t.at,
          },
          negate: false,
        };
      default:
        throw querySyntaxError(t?.at ?? this.endAt, 'a term, phrase, range or "(" is missing here');
    }
  }

  /** `-(...)`, `!(...)`, `+(...)`, and `-(Field Name):value`. */
  private signed(sign: Sign, field: FieldRef | null): Operand {
    const t = this.take();
    if (t?.kind === 'open') return { node: this.group(t, field), negate: negates(sign) };
    if (t?.kind === 'field' && field === null) {
      const inner = this.fieldValue(t);
      return { node: inner.node, negate: inner.negate !== negates(sign) };
    }
    throw querySyntaxError(t?.at ?? this.endAt, `"${sign}" must be followed by "(" here`);
  }

  private fieldValue(f: Extract<Token, { kind: 'field' }>): Operand {
    const field: FieldRef = { name: f.name, at: f.at };
    const v = this.tokens[this.i];
    if (v === undefined || v.kind === 'close')
      throw querySyntaxError(f.at, `a value must follow ${quoteInput(`${f.name}:`)}`);
    this.i++;
    let value: Operand;
    switch (v.kind) {
      case 'word':
        // An operator word after the colon is the value (Title:AND searches for "and"), except the last
        // word of the query after a blank: `Title: AND` is an unfinished query, as it always was.
        if (v.operator && v.at > f.colon + 1 && this.i === this.tokens.length)
          throw querySyntaxError(v.at, `nothing follows ${v.operator}`);
        value = { node: wordTerm(v, field), negate: negates(v.sign) };
        break;
      case 'phrase':
        value = { node: phraseTerm(v, field), negate: negates(v.sign) };
        break;
      case 'range':
        value = {
          node: {
            kind: 'range',
            field,
            low: v.low,
            high: v.high,
            lowInclusive: v.lowInclusive,
            highInclusive: v.highInclusive,
            at: v.at,
          },
          negate: false,
        };
        break;
      case 'open':
        value = { node: this.group(v, field), negate: false };
        break;
      case 'sign':
        value = this.signed(v.sign, field);
        break;
      case 'field':
        // Named at the second field: `Title:Year:5`.
        throw querySyntaxError(v.at, `a value must follow ${quoteInput(`${f.name}:`)}`);
    }
    // A sign on the field and one on the value both count: -Title:-war finds titles with "war".
    return { node: value.node, negate: value.negate !== negates(f.sign) };
  }
}
