import { z } from 'zod';
import { quoteInput } from '@quarry/errors';
import * as L from '../limits';

/*
 * The pieces every method's params are made of. Messages say `{param}` where the parameter goes:
 * parseParams puts the issue's exact path there (`sort[2].field`), which no message written per schema can know.
 */

export const PARAM = '{param}';

/** Marks an issue that relates two parameters, a rule JSON Schema cannot state (the method's description does). */
export const CROSS = { crossParameter: true } as const;

export const string = (max: number, what = 'a string') =>
  z.string({ error: `${PARAM} must be ${what}` }).max(max, { error: `${PARAM} must be at most ${max} characters` });

/** Required and not blank; the regex (not a refine) so that JSON Schema states it too. */
export const requiredString = (max: number) =>
  z
    .string({ error: `${PARAM} is required` })
    .max(max, { error: `${PARAM} must be at most ${max} characters` })
    .regex(/\S/, { error: `${PARAM} is required` });

export const optionalString = (max: number) => string(max).optional();

/** Absent, or text that is not blank: a name, a query or a column, where "" would mean nothing. */
export const optionalNonBlank = (max: number) =>
  string(max)
    .regex(/\S/, { error: `${PARAM} must not be blank` })
    .optional();

export const optionalBoolean = () => z.boolean({ error: `${PARAM} must be a boolean` }).optional();

export const intInRange = (min: number, max: number) => {
  const error = `${PARAM} must be an integer between ${min} and ${max}`;
  return z.number({ error }).int({ error }).min(min, { error }).max(max, { error }).optional();
};

export const arrayOf = <T extends z.ZodType>(item: T, max: number) =>
  z.array(item, { error: `${PARAM} must be an array` }).max(max, { error: `${PARAM} may have at most ${max} items` });

/** One of a fixed set of words; any other value is a 400 listing them. */
export const oneOf = <const T extends readonly [string, ...string[]]>(values: T) =>
  z.enum(values, { error: `${PARAM} must be one of ${values.map((v) => `"${v}"`).join(', ')}` });

/**
 * A keyword from a fixed set, trimmed and matched case-insensitively (as sort directions and FusionCharts
 * names always were) unless `exact`; any other string is refused with `refusal(quotedInput)` after the
 * parameter's name. The pattern states the same set to JSON Schema readers.
 */
export const keywordOf = (
  values: readonly string[],
  refusal: (quoted: string) => string,
  opts: { exact?: boolean; blankMeansDefault?: boolean } = {},
) => {
  const escaped = values.map((v) => v.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  // Letters as [aA] rather than the `i` flag: JSON Schema patterns carry no flags.
  const alternatives = opts.exact
    ? escaped
    : escaped.map((v) => v.replace(/[a-z]/gi, (c) => `[${c.toLowerCase()}${c.toUpperCase()}]`));
  const optional = opts.blankMeansDefault ? '?' : '';
  const pattern = opts.exact
    ? new RegExp(`^(?:${alternatives.join('|')})${optional}$`)
    : new RegExp(`^\\s*(?:${alternatives.join('|')})${optional}\\s*$`);
  const error = (iss: { code?: string; input?: unknown }) => {
    if (iss.input === undefined) return `${PARAM} is required`;
    if (typeof iss.input !== 'string') return `${PARAM} must be a string`;
    if (iss.code === 'too_big') return `${PARAM} must be at most ${L.KEYWORD_MAX} characters`;
    return `${PARAM} ${refusal(quoteInput(iss.input))}`;
  };
  // The words themselves as `examples`: a reader (docs/api.md, a form) lists them instead of the pattern.
  return z
    .string({ error })
    .max(L.KEYWORD_MAX, { error, abort: true })
    .regex(pattern, { error })
    .meta({ examples: [...values] });
};

/** Whether the name is a time zone this runtime (and DuckDB's ICU, which shares the IANA data) knows. */
export function isTimeZone(name: string): boolean {
  // Making a DateTimeFormat to ask costs a few hundred microseconds, on every call that names a zone.
  const known = timeZones.get(name);
  if (known !== undefined) return known;
  let valid: boolean;
  try {
    new Intl.DateTimeFormat('en', { timeZone: name });
    valid = name.trim() !== '';
  } catch {
    valid = false;
  }
  // Bounded: a caller sending a new made-up name every call must not grow it without end.
  if (timeZones.size < 1000) timeZones.set(name, valid);
  return valid;
}

const timeZones = new Map<string, boolean>();
