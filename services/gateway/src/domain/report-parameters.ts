import { AppError, quoteInput, quoteList } from '@quarry/errors';
import {
  QUERY_MAX_LENGTH,
  type ParameterDeclaration,
  type ParameterSetting,
  type ParameterSettings,
  type ReportParameter,
} from '@quarry/contract';
import { escapeQueryText, fieldPrefix, parseDateValue } from '@quarry/query-language';

/*
 * Report parameters: declared on a saved report, given by name when it runs. A value is typed by its field
 * and written into the query as an escaped literal (`Field:=text`, `Field:[from TO to]`), so whatever text
 * it holds (OR, *, quotes, a field name and ":") is compared as that text, never read as syntax.
 */

/** Where a saved version's params keep the declarations: beside the executable ones, never passed to the method. */
export const PARAMETERS_KEY = 'parameters';

export interface IndexField {
  name: string;
  type: string;
}

const NUMERIC = new Set(['number', 'integer']);

/** A date as the query language reads one (2024, 2024-03, 2024-03-05T10:00Z, TODAY-7DAYS), checked here. */
function isDate(text: string): boolean {
  const d = parseDateValue(text, Date.now());
  return d !== null && d !== 'out-of-range' && text.trim() !== '';
}

/** Why one value does not suit the field, or undefined. */
function valueProblem(v: unknown, type: string): string | undefined {
  if (type === 'string') {
    if (typeof v !== 'string') return 'must be text';
    return v === '' ? 'must not be empty' : undefined;
  }
  if (NUMERIC.has(type)) {
    if (typeof v !== 'number') return `must be a number (the field is ${type})`;
    return type === 'integer' && !Number.isInteger(v) ? 'must be an integer (the field is integer)' : undefined;
  }
  if (type === 'boolean') return typeof v === 'boolean' ? undefined : 'must be true or false';
  if (type === 'date')
    return typeof v === 'string' && isDate(v)
      ? undefined
      : 'must be a date such as "2024-03-05", "2024-03" or "2024-03-05T10:00:00Z"';
  return `cannot be set: the field's type ${quoteInput(type)} is not supported`;
}

/** Checks a setting against its parameter; `at` names it (`parameters.region`) in the 400. */
function checkSetting(p: Pick<ReportParameter, 'kind' | 'fieldType'>, s: ParameterSetting, at: string): void {
  if (Array.isArray(s)) {
    if (p.kind !== 'values') throw AppError.invalid(`${at} must be {from, to}: it is a range parameter`);
    s.forEach((v, i) => {
      const problem = valueProblem(v, p.fieldType);
      if (problem) throw AppError.invalid(`${at}[${i}] ${problem}`);
    });
    return;
  }
  if (p.kind !== 'range') throw AppError.invalid(`${at} must be an array of values: it is a values parameter`);
  for (const end of ['from', 'to'] as const) {
    const v = s[end];
    const problem = v === undefined ? undefined : valueProblem(v, p.fieldType);
    if (problem) throw AppError.invalid(`${at}.${end} ${problem}`);
  }
}

/**
 * Declarations checked against the index's fields (as the caller sees them): the field must exist (its
 * own spelling is kept), a range needs a number or date field, and a default must suit the field.
 */
export function declareParameters(
  declared: readonly ParameterDeclaration[],
  fields: readonly IndexField[],
  at: string,
): ReportParameter[] {
  return declared.map((d, i) => {
    const where = `${at}[${i}]`;
    const field =
      fields.find((f) => f.name === d.field) ?? fields.find((f) => f.name.toLowerCase() === d.field.toLowerCase());
    if (!field)
      throw AppError.invalid(
        `${where}.field: the index has no field ${quoteInput(d.field)}; its fields are ${quoteList(fields.map((f) => f.name))}`,
      );
    if (d.kind === 'range' && !NUMERIC.has(field.type) && field.type !== 'date')
      throw AppError.invalid(
        `${where}.kind: a range needs a number or date field; ${quoteInput(field.name)} is ${field.type} (use "values")`,
      );
    const parameter: ReportParameter = {
      name: d.name,
      field: field.name,
      fieldType: field.type,
      kind: d.kind,
      required: d.required ?? false,
      ...(d.default !== undefined ? { default: d.default } : {}),
    };
    if (d.default !== undefined) checkSetting(parameter, d.default, `${where}.default`);
    return parameter;
  });
}

/** The names a report declares, for a 400 that says what may be given. */
const declaredNames = (declared: readonly ReportParameter[]) =>
  declared.length ? `it declares ${quoteList(declared.map((p) => p.name))}` : 'it declares none';

/**
 * Checks settings against the declarations: every name declared, every value typed by its field. Used for
 * a run's values and for the ones an embed token locks.
 */
export function checkSettings(declared: readonly ReportParameter[], given: ParameterSettings | undefined): void {
  for (const [name, setting] of Object.entries(given ?? {})) {
    const p = declared.find((d) => d.name === name);
    if (!p) throw AppError.invalid(`parameters.${name} is not a parameter of this report; ${declaredNames(declared)}`);
    checkSetting(p, setting, `parameters.${name}`);
  }
}

function literal(v: string | number | boolean): string {
  return escapeQueryText(String(v));
}

/** One parameter's setting as one clause of the query language, every value a literal. */
function clause(p: ReportParameter, s: ParameterSetting): string {
  const f = fieldPrefix(p.field);
  if (Array.isArray(s)) {
    // Exact text (case and blanks kept) on text fields; equal values (a date's whole period) on the others.
    const leaves = s.map((v) => (p.fieldType === 'string' ? `${f}=${literal(v)}` : `${f}${literal(v)}`));
    return leaves.length === 1 ? leaves[0] : `(${leaves.join(' OR ')})`;
  }
  const end = (v: string | number | undefined) => (v === undefined ? '*' : literal(v));
  return `${f}[${end(s.from)} TO ${end(s.to)}]`;
}

/**
 * The saved query with every given (or default) parameter ANDed in: undeclared names, values of the wrong
 * type and required parameters left out are 400s naming them.
 */
export function applyParameters(
  query: string | undefined,
  declared: readonly ReportParameter[],
  given: ParameterSettings | undefined,
): string | undefined {
  checkSettings(declared, given);
  const clauses: string[] = [];
  for (const p of declared) {
    // Own keys only: a parameter may be named like an Object method (constructor, toString).
    const setting = (given && Object.hasOwn(given, p.name) ? given[p.name] : undefined) ?? p.default;
    if (setting === undefined) {
      if (p.required) throw AppError.invalid(`parameters.${p.name} is required by this report`);
      continue;
    }
    clauses.push(clause(p, setting));
  }
  if (clauses.length === 0) return query;
  const saved = query?.trim() ?? '';
  const all = saved === '' || saved === '*' ? clauses : [`(${closed(saved)})`, ...clauses];
  const combined = all.join(' AND ');
  if (combined.length > QUERY_MAX_LENGTH)
    throw AppError.invalid(
      `parameters: the values make the report's query longer than ${QUERY_MAX_LENGTH} characters; give fewer or shorter values`,
    );
  return combined;
}

/**
 * The query as it may stand before a ")": a trailing lone backslash is an ordinary character there, but
 * would escape the parenthesis; doubled, it reads as the same one backslash.
 */
function closed(query: string): string {
  const trailing = /\\*$/.exec(query)?.[0].length ?? 0;
  return trailing % 2 === 1 ? `${query}\\` : query;
}

/** A saved version's params split into what the method runs with and the parameters it declares. */
export function splitSavedParams(saved: Record<string, unknown>): {
  params: Record<string, unknown>;
  parameters: ReportParameter[];
} {
  const { [PARAMETERS_KEY]: stored, ...params } = saved;
  return { params, parameters: Array.isArray(stored) ? (stored as ReportParameter[]) : [] };
}
