import type { z } from 'zod';
import { AppError, quoteList, unpairedSurrogateAt } from '@quarry/errors';
import { PARAM } from './param-schemas';

/**
 * The detail names every problem up to this many, then says how many more there are: a request with many
 * mistakes is fixed in one round trip, and a huge body still gets a small detail.
 */
export const MAX_PARAM_PROBLEMS = 20;

/** `sort[2].field` from zod's ["sort", 2, "field"]. */
function paramName(path: readonly PropertyKey[]): string {
  return path.reduce<string>(
    (name, key) => (typeof key === 'number' ? `${name}[${key}]` : name ? `${name}.${String(key)}` : String(key)),
    '',
  );
}

/**
 * The first string in validated params holding an unpaired surrogate: a query would compare differently
 * on each search path, and a saved name would not read back as sent. Keys need no look: every schema is
 * strict, so the validated keys are its own.
 */
function unpairedSurrogate(
  value: unknown,
  path: PropertyKey[],
): { path: PropertyKey[]; text: string; at: number } | undefined {
  if (typeof value === 'string') {
    const at = unpairedSurrogateAt(value);
    return at < 0 ? undefined : { path, text: value, at };
  }
  if (typeof value !== 'object' || value === null) return undefined;
  for (const [key, v] of Array.isArray(value) ? value.entries() : Object.entries(value)) {
    const found = unpairedSurrogate(v, [...path, key]);
    if (found) return found;
  }
  return undefined;
}

/**
 * Parses params or throws one 400 naming every offending parameter. Unknown keys are the caller's text,
 * so they are quoted, cut short and counted past ten: the detail stays small whatever arrives. `at`
 * names where these params sit in the request (REPORTS.UPDATE's `params`), so each problem is named
 * from the top.
 */
export function parseParams<T extends z.ZodType>(schema: T, params: Record<string, unknown>, at?: string): z.output<T> {
  const proto = protoKeyPath(params);
  if (proto) throw AppError.invalid(`${paramName(at ? [at, ...proto] : proto)}: "__proto__" is not accepted as a key`);
  const parsed = schema.safeParse(params);
  if (parsed.success) {
    const bad = unpairedSurrogate(parsed.data, []);
    if (bad) {
      const unit = bad.text.charCodeAt(bad.at).toString(16).toUpperCase();
      throw AppError.invalid(
        `${paramName(at ? [at, ...bad.path] : bad.path) || 'params'} is not valid Unicode: it holds an unpaired surrogate (\\u${unit}) at character ${bad.at + 1}`,
      );
    }
    return parsed.data;
  }
  const details = parsed.error.issues.map((issue) => {
    const name = paramName(at ? [at, ...issue.path] : issue.path);
    if (issue.code === 'unrecognized_keys') {
      const where = name ? ` in ${name}` : '';
      return `Unknown parameter${issue.keys.length > 1 ? 's' : ''}${where}: ${quoteList(issue.keys)}`;
    }
    return issue.message.split(PARAM).join(name || 'params');
  });
  const problems = [...new Set(details)];
  const shown = problems.slice(0, MAX_PARAM_PROBLEMS).join('; ');
  const more = problems.length - MAX_PARAM_PROBLEMS;
  throw AppError.invalid(more > 0 ? `${shown}; and ${more} more problem${more > 1 ? 's' : ''}` : shown);
}

/**
 * Where the params hold an own "__proto__" key (JSON.parse makes one), or undefined. Any object built
 * from the caller's keys (a report's parameters, an embed token's) would take it as its prototype rather
 * than as a key, and what it named would vanish without a word: refused by name instead. Walked without
 * recursion (params may nest 100,000 levels before their schema refuses them), each node with its parent.
 */
function protoKeyPath(params: unknown): Array<string | number> | undefined {
  type Node = { value: unknown; key: string | number; parent: Node | undefined };
  const stack: Node[] = [{ value: params, key: '', parent: undefined }];
  while (stack.length > 0) {
    const node = stack.pop()!;
    const v = node.value;
    if (v === null || typeof v !== 'object') continue;
    if (!Array.isArray(v) && Object.hasOwn(v, '__proto__')) {
      const path: Array<string | number> = ['__proto__'];
      for (let n: Node | undefined = node; n?.parent; n = n.parent) path.unshift(n.key);
      return path;
    }
    if (Array.isArray(v)) v.forEach((child, i) => stack.push({ value: child, key: i, parent: node }));
    else for (const [k, child] of Object.entries(v)) stack.push({ value: child, key: k, parent: node });
  }
  return undefined;
}
