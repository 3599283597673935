/*
 * Calculated totals: `"[Cost] / [Strikes]"`. Quarry's own small grammar (other totals by name in
 * brackets, numbers, + - * / and parentheses), so it is parsed here, where both the gateway (a 400
 * before any scan) and the crosstab service (which evaluates it) read it the same way.
 *
 *   expr   := term (("+" | "-") term)*
 *   term   := unary (("*" | "/") unary)*
 *   unary  := "-" unary | atom
 *   atom   := number | "[" name "]" | "(" expr ")"
 */

export type FormulaNode =
  | { kind: 'number'; value: number }
  | { kind: 'ref'; name: string; at: number }
  | { kind: 'neg'; operand: FormulaNode }
  | { kind: 'binary'; op: '+' | '-' | '*' | '/'; left: FormulaNode; right: FormulaNode };

/** A formula that does not parse: what is wrong, at which character (0-based). */
export class FormulaError extends Error {
  constructor(
    readonly at: number,
    readonly problem: string,
  ) {
    super(`${problem} at position ${at + 1}`);
  }
}

/** Deeper nesting than anyone writes by hand; it bounds the parser's recursion. */
export const FORMULA_MAX_DEPTH = 64;
export const FORMULA_MAX_LENGTH = 2000;

export function parseFormula(text: string): FormulaNode {
  let pos = 0;
  let depth = 0;
  const skip = () => {
    while (pos < text.length && /\s/.test(text[pos])) pos++;
  };
  const peek = () => {
    skip();
    return text[pos];
  };
  const shown = (c: string | undefined) => (c === undefined ? 'the end' : `"${c}"`);
  const nest = <T>(at: number, f: () => T): T => {
    if (++depth > FORMULA_MAX_DEPTH) throw new FormulaError(at, `nesting deeper than ${FORMULA_MAX_DEPTH}`);
    try {
      return f();
    } finally {
      depth--;
    }
  };

  const atom = (): FormulaNode => {
    const c = peek();
    const at = pos;
    if (c === '[') {
      const close = text.indexOf(']', pos + 1);
      if (close < 0) throw new FormulaError(at, 'a "[" without its "]"');
      const name = text.slice(pos + 1, close).trim();
      if (name === '') throw new FormulaError(at, 'an empty total name');
      pos = close + 1;
      return { kind: 'ref', name, at };
    }
    if (c === '(') {
      pos++;
      const inner = nest(at, expr);
      if (peek() !== ')') throw new FormulaError(pos, `expected ")" but found ${shown(text[pos])}`);
      pos++;
      return inner;
    }
    const m = /^(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?/.exec(text.slice(pos));
    if (m) {
      pos += m[0].length;
      return { kind: 'number', value: Number(m[0]) };
    }
    throw new FormulaError(at, `expected a number, a [total] or "(" but found ${shown(c)}`);
  };

  const unary = (): FormulaNode => {
    if (peek() === '-') {
      const at = pos;
      pos++;
      return { kind: 'neg', operand: nest(at, unary) };
    }
    return atom();
  };

  const term = (): FormulaNode => {
    let left = unary();
    for (let c = peek(); c === '*' || c === '/'; c = peek()) {
      pos++;
      left = { kind: 'binary', op: c, left, right: unary() };
    }
    return left;
  };

  function expr(): FormulaNode {
    let left = term();
    for (let c = peek(); c === '+' || c === '-'; c = peek()) {
      pos++;
      left = { kind: 'binary', op: c, left, right: term() };
    }
    return left;
  }

  if (text.length > FORMULA_MAX_LENGTH) throw new FormulaError(FORMULA_MAX_LENGTH, `longer than ${FORMULA_MAX_LENGTH}`);
  const node = expr();
  if (peek() !== undefined) throw new FormulaError(pos, `unexpected ${shown(text[pos])}`);
  return node;
}

/** The names a formula reads, with where each is written. */
export function formulaRefs(node: FormulaNode): Array<{ name: string; at: number }> {
  switch (node.kind) {
    case 'number':
      return [];
    case 'ref':
      return [{ name: node.name, at: node.at }];
    case 'neg':
      return formulaRefs(node.operand);
    case 'binary':
      return [...formulaRefs(node.left), ...formulaRefs(node.right)];
  }
}

/**
 * The formula's value from the totals it reads (`valueOf(name)`); null when any of them is empty or a
 * division by zero happens anywhere in it (an empty cell, never Infinity).
 */
export function evaluateFormula(node: FormulaNode, valueOf: (name: string) => number | null): number | null {
  switch (node.kind) {
    case 'number':
      return node.value;
    case 'ref':
      return valueOf(node.name);
    case 'neg': {
      const v = evaluateFormula(node.operand, valueOf);
      return v === null ? null : -v;
    }
    case 'binary': {
      const a = evaluateFormula(node.left, valueOf);
      const b = evaluateFormula(node.right, valueOf);
      if (a === null || b === null) return null;
      switch (node.op) {
        case '+':
          return a + b;
        case '-':
          return a - b;
        case '*':
          return a * b;
        case '/':
          return b === 0 ? null : a / b;
      }
    }
  }
}

/** What a total is named by when it has no `name` (as the table's header shows it). */
export function defaultTotalName(t: {
  aggregationType?: string;
  field?: string;
  dynamicView?: string;
  percentile?: number;
}): string {
  const agg = t.aggregationType ?? '';
  if (t.dynamicView) return `Count (${t.dynamicView})`;
  if (!t.field) return 'Count (Records)';
  if (agg === 'Percentile') return `P${t.percentile ?? ''} (${t.field})`;
  return `${agg} (${t.field})`;
}

export interface TotalForFormulas {
  name?: string;
  aggregationType?: string;
  field?: string;
  dynamicView?: string;
  percentile?: number;
  formula?: string;
}

export interface FormulaProblem {
  /** Index into totals. */
  total: number;
  message: string;
}

/**
 * Every formula of a crosstab parsed and resolved against the totals' names (case-insensitively): the
 * parsed formulas by total index and an order in which to evaluate them (each after what it reads), or
 * the problems: a syntax error, an unknown or ambiguous name, a cycle, each with its position.
 */
export function resolveFormulas(totals: readonly TotalForFormulas[]): {
  parsed: Map<number, { node: FormulaNode; reads: number[] }>;
  order: number[];
  problems: FormulaProblem[];
} {
  const names = totals.map((t) => (t.name && t.name.trim() !== '' ? t.name : defaultTotalName(t)).toLowerCase());
  const parsed = new Map<number, { node: FormulaNode; reads: number[] }>();
  const problems: FormulaProblem[] = [];
  totals.forEach((t, i) => {
    if (t.formula === undefined) return;
    let node: FormulaNode;
    try {
      node = parseFormula(t.formula);
    } catch (err) {
      if (!(err instanceof FormulaError)) throw err;
      problems.push({ total: i, message: `${err.problem} at position ${err.at + 1}` });
      return;
    }
    const reads: number[] = [];
    for (const ref of formulaRefs(node)) {
      const hits = names.flatMap((n, j) => (n === ref.name.toLowerCase() ? [j] : []));
      if (hits.length === 0) {
        problems.push({ total: i, message: `unknown total [${ref.name}] at position ${ref.at + 1}` });
      } else if (hits.length > 1) {
        problems.push({ total: i, message: `[${ref.name}] at position ${ref.at + 1} names ${hits.length} totals` });
      } else reads.push(hits[0]);
    }
    parsed.set(i, { node, reads });
  });
  // Depth-first over what each formula reads: a formula met again while still open closes a cycle.
  const order: number[] = [];
  const state = new Map<number, 'open' | 'done'>();
  const visit = (i: number, path: number[]): void => {
    const s = state.get(i);
    if (s === 'done') return;
    if (s === 'open') {
      const cycle = [...path.slice(path.indexOf(i)), i].map((j) => `[${totals[j].name ?? names[j]}]`);
      problems.push({ total: i, message: `the formula refers to itself: ${cycle.join(' → ')}` });
      return;
    }
    state.set(i, 'open');
    for (const j of parsed.get(i)?.reads ?? []) if (parsed.has(j)) visit(j, [...path, i]);
    state.set(i, 'done');
    order.push(i);
  };
  for (const i of parsed.keys()) visit(i, []);
  return { parsed, order, problems };
}
