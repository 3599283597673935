import { AppError } from '@quarry/errors';

/** Nesting (parentheses and range brackets together) beyond which a query is refused before it is parsed. */
export const MAX_QUERY_DEPTH = 32;

/** The error of a malformed query: `offset` is 0-based in the text the user sent, the detail 1-based. */
export function querySyntaxError(offset: number, what: string): AppError {
  return AppError.invalid(`Query syntax error at position ${offset + 1}: ${what}`);
}

/** A region of the user's text: the query without the blanks around it, positions still in the original. */
export interface QueryText {
  text: string;
  start: number;
  end: number;
}

/** The query language's blanks (the lexer's): other Unicode spaces are part of words, margins included. */
const isBlank = (ch: string) => ch === ' ' || ch === '\t' || ch === '\r' || ch === '\n' || ch === '\f';

export function trimmedQuery(text: string): QueryText {
  let end = text.length;
  while (end > 0 && isBlank(text[end - 1])) end--;
  // A blank after an odd run of backslashes is escaped: it belongs to the term (`key:=alpha\ `), not the margin.
  let slashes = 0;
  while (end - slashes > 0 && text[end - slashes - 1] === '\\') slashes++;
  if (slashes % 2 === 1 && end < text.length) end++;
  let start = 0;
  while (start < end && isBlank(text[start])) start++;
  return { text, start, end };
}

interface Open {
  char: '(' | '[' | '{';
  at: number;
}

/**
 * One pass over the text before anything recursive sees it: every quote is closed, every parenthesis and
 * range bracket is matched, and nesting stays within MAX_QUERY_DEPTH. The parser relies on this for its
 * recursion bound, so the check must agree with the lexer on what a quote and an escape are: a backslash
 * takes the next character with it, inside quotes and out.
 */
export function scanQuery(q: QueryText): void {
  const { text, end } = q;
  const open: Open[] = [];
  for (let i = q.start; i < end; i++) {
    const ch = text[i];
    if (ch === '\\') {
      i++;
    } else if (ch === '"') {
      const from = i;
      for (i++; i < end && text[i] !== '"'; i++) if (text[i] === '\\') i++;
      if (i >= end) throw querySyntaxError(from, 'the quote opened here is never closed');
    } else if (ch === '(' || ch === '[' || ch === '{') {
      const top = open[open.length - 1];
      if (top && top.char !== '(')
        throw querySyntaxError(i, `"${ch}" inside the range opened at position ${top.at + 1}`);
      open.push({ char: ch, at: i });
      if (open.length > MAX_QUERY_DEPTH)
        throw querySyntaxError(i, `parentheses nest deeper than ${MAX_QUERY_DEPTH} levels`);
    } else if (ch === ')') {
      const top = open.pop();
      if (!top) throw querySyntaxError(i, '")" has no matching "("');
      if (top.char !== '(') throw querySyntaxError(top.at, `the range "${top.char}" is never closed with "]" or "}"`);
    } else if (ch === ']' || ch === '}') {
      const top = open.pop();
      if (!top || top.char === '(') throw querySyntaxError(i, `"${ch}" closes no range`);
    }
  }
  const last = open.pop();
  if (last) throw querySyntaxError(last.at, `"${last.char}" is never closed`);
}
