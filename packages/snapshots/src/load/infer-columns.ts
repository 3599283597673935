import type { DuckDBConnection } from '@duckdb/node-api';
import type { FieldType } from '@quarry/query-language';
import { ident, literal } from '../sql';

/*
 * Column types that never change a value. A text column becomes a number, a boolean or a date only
 * when every value of the whole file reads as one exactly (leading zeros, integers beyond 2^53, `1e5`,
 * words among numbers all keep the column text); a sample proposes, one scan of every row confirms.
 */

/** Not a strptime layout: ISO 8601 text read by DuckDB's own TIMESTAMPTZ cast (strptime has no optional parts). */
const ISO_WITH_ZONE = 'ISO 8601';

/** The instant a text names, in UTC: strptime for a layout, the TIMESTAMPTZ cast for ISO 8601. */
function readDate(text: string, format: string, tryIt: boolean): string {
  if (format === ISO_WITH_ZONE) return `timezone('UTC', ${tryIt ? 'TRY_CAST' : 'CAST'}(${text} AS TIMESTAMPTZ))`;
  return `${tryIt ? 'try_strptime' : 'strptime'}(${text}, ${literal(format)})`;
}

/** Date layouts tried on text columns, most specific first (strptime syntax). */
const DATE_FORMATS: Array<{ format: string; hasTime: boolean }> = [
  { format: '%Y-%m-%dT%H:%M:%S', hasTime: true },
  { format: '%Y-%m-%d %H:%M:%S', hasTime: true },
  { format: '%Y-%m-%dT%H:%M', hasTime: true },
  { format: '%Y-%m-%d %H:%M', hasTime: true },
  { format: '%Y/%m/%d %H:%M:%S', hasTime: true },
  { format: '%Y/%m/%d %H:%M', hasTime: true },
  { format: '%Y-%m-%d', hasTime: false },
  { format: '%Y/%m/%d', hasTime: false },
  { format: '%b %d %Y', hasTime: false },
  { format: '%d-%b-%y', hasTime: false },
  { format: '%m/%d/%Y', hasTime: false },
  // ISO 8601 with a zone (`Z`, `+02:00`) and optional fractions: read as the instant it names, as JSON's
  // reader types such text, so a CSV and a JSON file of the same values load alike.
  { format: ISO_WITH_ZONE, hasTime: true },
];

/** BIGINT's range: integers beyond it keep their digits as text. */
const MAX_BIGINT = 9223372036854775807n;
/** A double holds 15 significant decimal digits exactly. */
const DOUBLE_DIGITS = 15;

export interface ColumnPlan {
  name: string;
  type: FieldType;
  /** SQL turning the source column into the stored value. */
  expr: string;
  /** The same conversion yielding NULL instead of failing, to find (or skip) a row it cannot read. */
  tryExpr: string;
  /** NULL exactly when the value cannot be read (defaults to tryExpr; a number's NaN reads, then is stored missing). */
  checkExpr?: string;
}

/**
 * The types a column may take, most specific first, each with the SQL counting the values it would
 * change over the whole source; the last one (text, or a declared type) has no check.
 */
type Chain = Array<{ plan: ColumnPlan; badWhere?: string }>;

function inferType(duckType: string): FieldType | 'text' {
  const t = duckType.toUpperCase();
  if (t === 'BOOLEAN') return 'boolean';
  if (/^(TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT|UTINYINT|USMALLINT|UINTEGER|UBIGINT|UHUGEINT)$/.test(t))
    return 'integer';
  if (/^(FLOAT|DOUBLE|REAL)$/.test(t) || t.startsWith('DECIMAL')) return 'number';
  if (t === 'DATE' || t.startsWith('TIMESTAMP')) return 'date';
  return 'text';
}

async function rows(c: DuckDBConnection, sql: string): Promise<Array<Record<string, unknown>>> {
  return (await c.runAndReadAll(sql)).getRowObjectsJS() as Array<Record<string, unknown>>;
}

const plan = (name: string, type: FieldType, expr: string, tryExpr = expr): ColumnPlan => ({
  name,
  type,
  expr,
  tryExpr,
});

type DateLayout = { format: string; hasTime: boolean };

/**
 * For each column, the first date layout that reads every sampled value (or null), all columns and
 * layouts in one pass over the sample.
 */
async function detectDateFormats(
  c: DuckDBConnection,
  sample: string,
  cols: string[],
  preferred: string | undefined,
): Promise<Map<string, DateLayout | null>> {
  const formats = preferred
    ? [{ format: preferred, hasTime: /%[HIMSTfpz]/.test(preferred) }, ...DATE_FORMATS]
    : DATE_FORMATS;
  const found = new Map<string, DateLayout | null>();
  if (cols.length === 0) return found;
  const parts = cols.flatMap((col, k) => {
    const v = `nullif(trim(CAST(${ident(col)} AS VARCHAR)), '')`;
    return [`count(${v}) AS n${k}`, ...formats.map((f, i) => `count(${readDate(v, f.format, true)}) AS c${k}_${i}`)];
  });
  const [r] = await rows(c, `SELECT ${parts.join(', ')} FROM ${sample}`);
  cols.forEach((col, k) => {
    const n = Number(r[`n${k}`]);
    const hit = n === 0 ? -1 : formats.findIndex((_, i) => Number(r[`c${k}_${i}`]) === n);
    found.set(col, hit >= 0 ? formats[hit] : null);
  });
  return found;
}

/** Sampled text that some date layout might read: digits, short, and not a plain number. */
function mayBeDates(values: string[]): boolean {
  const present = values.filter((v) => v.trim() !== '');
  return (
    present.length > 0 &&
    present.every((v) => v.length >= 6 && v.length <= 40 && /\d/.test(v) && !DECIMAL_TEXT.test(v.trim()))
  );
}

const INTEGER_TEXT = /^-?(0|[1-9]\d*)$/;
const DECIMAL_TEXT = /^-?(0|[1-9]\d*)(\.\d+)?$/;
const significantDigits = (v: string) => v.replace(/[-.]/g, '').replace(/^0+/, '').length;

/** What the sampled values of a text column allow, before the whole file confirms it. */
function proposeFromText(values: string[]): 'integer' | 'number' | 'boolean' | 'text' {
  const present = values.filter((v) => v.trim() !== '');
  if (present.length === 0) return 'text';
  if (present.every((v) => /^(true|false)$/i.test(v))) return 'boolean';
  if (present.every((v) => INTEGER_TEXT.test(v) && BigInt(v) <= MAX_BIGINT && BigInt(v) >= -MAX_BIGINT - 1n))
    return 'integer';
  if (present.every((v) => DECIMAL_TEXT.test(v) && significantDigits(v) <= DOUBLE_DIGITS)) return 'number';
  return 'text';
}

export interface PlanContext {
  c: DuckDBConnection;
  /** A relation holding a sample of the source (the first rows). */
  sample: string;
  /** Text columns (CSV) may become numbers and booleans; JSON keeps its own strings as strings. */
  numbersFromText: boolean;
  /** --date-format: tried before the built-in layouts. */
  dateFormat?: string;
  /** Filled by planColumns: each text column's date layout, from the sample. */
  dates?: Map<string, DateLayout | null>;
  /** Filled by planColumns: the sampled values of each column, as text. */
  sampled?: Map<string, string[]>;
}

/** Proposes a plan for one column, with the check over all rows that must confirm it. */
async function propose(
  ctx: PlanContext,
  name: string,
  duckType: string,
  declared: FieldType | undefined,
): Promise<Chain> {
  const col = ident(name);
  const inferred = inferType(duckType);
  const upper = duckType.toUpperCase();
  const isJson = upper === 'JSON';
  const asText = isJson ? `json_extract_string(${col}, '$')` : upper === 'VARCHAR' ? col : `CAST(${col} AS VARCHAR)`;
  const blankToNull = (e: string) => `nullif(trim(${e}), '')`;
  const text = plan(name, 'string', asText);
  const sure = (p: ColumnPlan): Chain => [{ plan: p }];
  const datePlan = (fmt: { format: string; hasTime: boolean }) => {
    const e = readDate(blankToNull(asText), fmt.format, false);
    const t = readDate(blankToNull(asText), fmt.format, true);
    return fmt.hasTime ? plan(name, 'date', e, t) : plan(name, 'date', `CAST(${e} AS DATE)`, `CAST(${t} AS DATE)`);
  };

  if (declared) {
    // A declared type is the user's decision: values it cannot read are malformed rows, not a reason to change it.
    switch (declared) {
      case 'boolean':
        if (inferred === 'boolean') return sure(plan(name, 'boolean', col));
        return sure(
          plan(
            name,
            'boolean',
            `CAST(${blankToNull(asText)} AS BOOLEAN)`,
            `TRY_CAST(${blankToNull(asText)} AS BOOLEAN)`,
          ),
        );
      case 'integer':
        if (upper === 'BIGINT') return sure(plan(name, 'integer', col));
        if (inferred === 'integer')
          return sure(plan(name, 'integer', `CAST(${col} AS BIGINT)`, `TRY_CAST(${col} AS BIGINT)`));
        return sure(
          plan(name, 'integer', `CAST(${blankToNull(asText)} AS BIGINT)`, `TRY_CAST(${blankToNull(asText)} AS BIGINT)`),
        );
      case 'number': {
        const src = inferred === 'integer' || inferred === 'number' ? col : blankToNull(asText);
        // NaN and infinities have no JSON form: store them as missing.
        const clean = (e: string) => `CASE WHEN isfinite(${e}) THEN ${e} END`;
        return sure({
          ...plan(name, 'number', clean(`CAST(${src} AS DOUBLE)`), clean(`TRY_CAST(${src} AS DOUBLE)`)),
          checkExpr: `TRY_CAST(${src} AS DOUBLE)`,
        });
      }
      case 'date': {
        if (upper === 'DATE' || upper === 'TIMESTAMP') return sure(plan(name, 'date', col));
        if (inferred === 'date')
          return sure(plan(name, 'date', `CAST(${col} AS TIMESTAMP)`, `TRY_CAST(${col} AS TIMESTAMP)`));
        const fmt = ctx.dates?.get(name) ?? null;
        if (fmt) return sure(datePlan(fmt));
        return sure(
          plan(
            name,
            'date',
            `CAST(${blankToNull(asText)} AS TIMESTAMP)`,
            `TRY_CAST(${blankToNull(asText)} AS TIMESTAMP)`,
          ),
        );
      }
      case 'string':
        return sure(text);
    }
  }

  if (inferred === 'integer') {
    // Integers are stored as BIGINT and carried exactly by every path (records travel as JSON text);
    // only a typed source's wider integers (HUGEINT, UBIGINT) that BIGINT cannot hold keep their digits as text.
    if (upper === 'BIGINT') return sure(plan(name, 'integer', col));
    return [
      {
        plan: plan(name, 'integer', `CAST(${col} AS BIGINT)`),
        badWhere: `${col} IS NOT NULL AND TRY_CAST(${col} AS BIGINT) IS NULL`,
      },
      { plan: text },
    ];
  }
  if (inferred === 'number') {
    const clean = (e: string) => `CASE WHEN isfinite(${e}) THEN ${e} END`;
    return sure(plan(name, 'number', clean(`CAST(${col} AS DOUBLE)`)));
  }
  if (inferred === 'boolean') return sure(plan(name, 'boolean', col));
  if (inferred === 'date') {
    if (upper === 'DATE' || upper === 'TIMESTAMP') return sure(plan(name, 'date', col));
    return sure(plan(name, 'date', `CAST(${col} AS TIMESTAMP)`));
  }

  // Text: dates first (a date column's sample also reads as text), then numbers when text may be one.
  const fmt = ctx.dates?.get(name) ?? null;
  if (fmt) {
    const p = datePlan(fmt);
    return [{ plan: p, badWhere: `${blankToNull(asText)} IS NOT NULL AND ${p.tryExpr} IS NULL` }, { plan: text }];
  }
  if (!ctx.numbersFromText) return sure(text);
  const sampled = ctx.sampled?.get(name) ?? [];
  // An empty field is missing (NULL); any other text, spaces included, must be the value's own spelling.
  const v = asText;
  // Plain decimal notation with at most 15 significant digits: what a double keeps exactly.
  const decimal = {
    plan: plan(name, 'number', `CAST(${v} AS DOUBLE)`),
    badWhere: `${v} IS NOT NULL AND NOT (regexp_full_match(${v}, '-?(0|[1-9][0-9]*)([.][0-9]+)?') AND length(ltrim(replace(replace(${v}, '-', ''), '.', ''), '0')) <= ${DOUBLE_DIGITS})`,
  };
  switch (proposeFromText(sampled)) {
    case 'boolean':
      return [
        {
          plan: plan(name, 'boolean', `CAST(${v} AS BOOLEAN)`),
          badWhere: `${v} IS NOT NULL AND lower(${v}) NOT IN ('true', 'false')`,
        },
        { plan: text },
      ];
    case 'integer': {
      // Exact only if the text is the integer's own spelling (no sign, zeros or blanks added) and fits BIGINT.
      const n = `TRY_CAST(${v} AS BIGINT)`;
      return [
        {
          plan: plan(name, 'integer', `CAST(${v} AS BIGINT)`),
          badWhere: `${v} IS NOT NULL AND CAST(${n} AS VARCHAR) IS DISTINCT FROM ${v}`,
        },
        decimal,
        { plan: text },
      ];
    }
    case 'number':
      return [decimal, { plan: text }];
    case 'text':
      return sure(text);
  }
}

/**
 * Plans every column: proposals from a sample, then scans of `source` that count, per proposal, the
 * values it would change; a proposal with any such value gives way to the next (integer, decimal, text).
 * One scan settles most files; a column that falls from integer to decimal needs a second.
 */
export async function planColumns(
  ctx: PlanContext,
  source: string,
  columns: Array<{ name: string; type: string }>,
  declared: Record<string, FieldType>,
  /** Runs the first scan (which also counts the rows); reports its progress. */
  scan: (sql: string) => Promise<Array<Record<string, unknown>>>,
): Promise<{ plans: ColumnPlan[]; rows: number; notes: TypeNote[] }> {
  const sampled = new Map<string, string[]>(columns.map((col) => [col.name, []]));
  const list = columns.map((col, k) => `CAST(${ident(col.name)} AS VARCHAR) AS v${k}`).join(', ');
  for (const r of await rows(ctx.c, `SELECT ${list} FROM ${ctx.sample}`)) {
    columns.forEach((col, k) => sampled.get(col.name)?.push(r[`v${k}`] === null ? '' : String(r[`v${k}`])));
  }
  // strptime is slow on text it cannot read: only columns that could hold dates are tried.
  const textual = columns.filter(
    (col) =>
      declared[col.name] === 'date' ||
      (inferType(col.type) === 'text' && (ctx.dateFormat !== undefined || mayBeDates(sampled.get(col.name) ?? []))),
  );
  const dates = await detectDateFormats(
    ctx.c,
    ctx.sample,
    textual.map((col) => col.name),
    ctx.dateFormat,
  );
  const withSample = { ...ctx, dates, sampled };
  const chains: Chain[] = [];
  for (const col of columns) chains.push(await propose(withSample, col.name, col.type, declared[col.name]));
  const notes: TypeNote[] = [];
  // Text from the sample already: say so where most sampled values read as numbers or dates.
  for (const [i, col] of columns.entries()) {
    const only = chains[i].length === 1 ? chains[i][0].plan : undefined;
    if (!only || only.type !== 'string' || declared[col.name] || inferType(col.type) !== 'text') continue;
    const note = await sampleNote(ctx, col.name, sampled.get(col.name) ?? []);
    if (note) notes.push(note);
  }
  const at = chains.map(() => 0);
  let counted = -1;
  for (;;) {
    const checks = chains
      .map((chain, i) => {
        const badWhere = chain[at[i]].badWhere;
        return badWhere ? `count(*) FILTER (WHERE ${badWhere}) AS b${i}` : undefined;
      })
      .filter((x): x is string => x !== undefined);
    if (checks.length === 0 && counted >= 0) break;
    const sql = `SELECT ${['count(*) AS __rows', ...checks].join(', ')} FROM ${source}`;
    const [r] = counted < 0 ? await scan(sql) : await rows(ctx.c, sql);
    if (counted < 0) counted = Number(r.__rows);
    for (const [i, chain] of chains.entries()) {
      const failed = chain[at[i]];
      if (!failed.badWhere) continue;
      if (Number(r[`b${i}`]) > 0) {
        at[i] += 1;
        // The column ends as text: the first value that kept it from `failed`'s type says why.
        if (chain[at[i]].plan.type === 'string') {
          const [first] = await rows(
            ctx.c,
            `SELECT __record, CAST(${ident(failed.plan.name)} AS VARCHAR) AS v FROM (SELECT row_number() OVER () AS __record, * FROM ${source}) WHERE ${failed.badWhere} LIMIT 1`,
          );
          if (first)
            notes.push({
              column: failed.plan.name,
              wanted: failed.plan.type,
              record: Number(first.__record),
              value: String(first.v),
            });
        }
      }
      // Every value reads: the plain conversion cannot fail, so no row needs the forgiving one.
      else chain[at[i]] = { plan: { ...failed.plan, tryExpr: failed.plan.expr } };
    }
  }
  return { plans: chains.map((chain, i) => chain[at[i]].plan), rows: counted, notes };
}

/** Why a column is text: the first value (at its record, from 1) not of the type most values read as. */
export interface TypeNote {
  column: string;
  wanted: FieldType;
  record: number;
  value: string;
}

/** A sampled text column most of whose values are numbers or dates: the first sampled value that is not. */
async function sampleNote(ctx: PlanContext, name: string, values: string[]): Promise<TypeNote | undefined> {
  const present = values.map((v, i) => ({ v, record: i + 1 })).filter(({ v }) => v.trim() !== '');
  if (present.length < 2) return undefined;
  const firstNot = (test: (v: string) => boolean, wanted: FieldType) => {
    const hits = present.filter(({ v }) => test(v)).length;
    const miss = present.find(({ v }) => !test(v));
    return hits * 2 >= present.length && miss
      ? { column: name, wanted, record: miss.record, value: miss.v }
      : undefined;
  };
  if (ctx.numbersFromText) {
    const integer = firstNot((v) => INTEGER_TEXT.test(v), 'integer');
    if (integer && present.every(({ v }) => !DECIMAL_TEXT.test(v) || INTEGER_TEXT.test(v))) return integer;
    const decimal = firstNot((v) => DECIMAL_TEXT.test(v), 'number');
    if (decimal) return decimal;
  }
  if (!present.some(({ v }) => /^\d{4}-\d{2}-\d{2}/.test(v))) return undefined;
  // Dates written as ISO days: which sampled ones no layout reads.
  const list = present.map(({ v }) => literal(v)).join(', ');
  const read = await rows(
    ctx.c,
    `SELECT v, TRY_CAST(v AS TIMESTAMPTZ) IS NOT NULL OR TRY_CAST(v AS DATE) IS NOT NULL AS ok FROM (SELECT unnest([${list}]) AS v)`,
  );
  const ok = new Map(read.map((r) => [String(r.v), r.ok === true]));
  return firstNot((v) => ok.get(v) === true, 'date');
}
