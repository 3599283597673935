/**
 * Date literals of the query language: ISO-like dates at year, month, day or instant precision, and the
 * CXAIR-style tokens (NOW, TODAY-7DAYS, FIRST_DAY_OF_MONTH, ...). All in UTC. A value of day precision
 * stands for the whole day, so `date:2001-01-14` and `[.. TO 2001-01-14]` include that day's times.
 */
export type DatePrecision = 'year' | 'month' | 'day' | 'instant';

export interface DateValue {
  /** Start of the period, epoch ms UTC. */
  start: number;
  /** End of the period (exclusive), epoch ms UTC; equals start + 1 ms for an instant. */
  end: number;
  precision: DatePrecision;
}

const DAY = 86_400_000;
/** The Gregorian calendar repeats every 400 years, which are exactly this many days. */
const FOUR_CENTURIES = 146_097 * DAY;

function utc(y: number, m: number, d: number, h = 0, mi = 0, s = 0, ms = 0): number {
  // Date.UTC reads years 0-99 as 1900-1999; computing 400 years later and stepping back avoids that.
  return Date.UTC(y + 400, m, d, h, mi, s, ms) - FOUR_CENTURIES;
}

/** The dates every engine holds: 0001-01-01 up to the end of 9999 (DuckDB, Typesense, toISOString). */
export const MIN_DATE_MS = utc(1, 0, 1);
export const MAX_DATE_MS = utc(10000, 0, 1);

function supported(ms: number): boolean {
  // NaN (an offset beyond what Date holds) fails both comparisons.
  return ms >= MIN_DATE_MS && ms <= MAX_DATE_MS;
}

function period(start: number, precision: DatePrecision): DateValue {
  const d = new Date(start);
  const y = d.getUTCFullYear();
  const m = d.getUTCMonth();
  switch (precision) {
    case 'year':
      return { start, end: utc(y + 1, 0, 1), precision };
    case 'month':
      return { start, end: utc(y, m + 1, 1), precision };
    case 'day':
      return { start, end: start + DAY, precision };
    case 'instant':
      return { start, end: start + 1, precision };
  }
}

const ISO = /^(\d{4})(?:[-/](\d{1,2})(?:[-/](\d{1,2})(?:[T ](\d{1,2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3}))?)?(Z)?)?)?)?$/i;

function parseIsoLike(text: string): DateValue | 'out-of-range' | null {
  const m = ISO.exec(text);
  if (!m) return null;
  const [y, mo, d, h, mi, s, ms] = [m[1], m[2], m[3], m[4], m[5], m[6], m[7]].map((v) =>
    v === undefined ? undefined : Number(v),
  );
  if (mo !== undefined && (mo < 1 || mo > 12)) return null;
  if (d !== undefined && (d < 1 || d > 31)) return null;
  if (h !== undefined && (h > 23 || (mi ?? 0) > 59 || (s ?? 0) > 59)) return null;
  const start = utc(
    y as number,
    (mo ?? 1) - 1,
    d ?? 1,
    h ?? 0,
    mi ?? 0,
    s ?? 0,
    ms === undefined ? 0 : Number(m[7]!.padEnd(3, '0')),
  );
  // Reject dates that rolled over (2001-02-30).
  if (d !== undefined && new Date(start).getUTCDate() !== d) return null;
  const precision: DatePrecision =
    h !== undefined ? 'instant' : d !== undefined ? 'day' : mo !== undefined ? 'month' : 'year';
  return checked(period(start, precision));
}

const TOKEN =
  /^(NOW|TODAY|YESTERDAY|TOMORROW|(FIRST|LAST)_DAY_OF_(WEEK|MONTH|QUARTER|YEAR))((?:[+-]\d+(?:SECOND|MINUTE|HOUR|DAY|WEEK|MONTH|YEAR)S?)*)$/i;
const OFFSET = /([+-]\d+)(SECOND|MINUTE|HOUR|DAY|WEEK|MONTH|YEAR)S?/gi;

function startOfDay(ms: number): number {
  const d = new Date(ms);
  return utc(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
}

function anchor(name: string, now: number): { start: number; precision: DatePrecision } {
  const today = startOfDay(now);
  const d = new Date(today);
  const y = d.getUTCFullYear();
  const m = d.getUTCMonth();
  const weekday = (d.getUTCDay() + 6) % 7; // Monday = 0: ISO weeks
  switch (name) {
    case 'NOW':
      return { start: now, precision: 'instant' };
    case 'TODAY':
      return { start: today, precision: 'day' };
    case 'YESTERDAY':
      return { start: today - DAY, precision: 'day' };
    case 'TOMORROW':
      return { start: today + DAY, precision: 'day' };
    case 'FIRST_DAY_OF_WEEK':
      return { start: today - weekday * DAY, precision: 'day' };
    case 'LAST_DAY_OF_WEEK':
      return { start: today + (6 - weekday) * DAY, precision: 'day' };
    case 'FIRST_DAY_OF_MONTH':
      return { start: utc(y, m, 1), precision: 'day' };
    case 'LAST_DAY_OF_MONTH':
      return { start: utc(y, m + 1, 1) - DAY, precision: 'day' };
    case 'FIRST_DAY_OF_QUARTER':
      return { start: utc(y, m - (m % 3), 1), precision: 'day' };
    case 'LAST_DAY_OF_QUARTER':
      return { start: utc(y, m - (m % 3) + 3, 1) - DAY, precision: 'day' };
    case 'FIRST_DAY_OF_YEAR':
      return { start: utc(y, 0, 1), precision: 'day' };
    default:
      return { start: utc(y + 1, 0, 1) - DAY, precision: 'day' };
  }
}

function shift(ms: number, amount: number, unit: string): number {
  const d = new Date(ms);
  switch (unit) {
    case 'SECOND':
      return ms + amount * 1000;
    case 'MINUTE':
      return ms + amount * 60_000;
    case 'HOUR':
      return ms + amount * 3_600_000;
    case 'DAY':
      return ms + amount * DAY;
    case 'WEEK':
      return ms + amount * 7 * DAY;
    case 'MONTH':
      d.setUTCMonth(d.getUTCMonth() + amount);
      return d.getTime();
    default:
      d.setUTCFullYear(d.getUTCFullYear() + amount);
      return d.getTime();
  }
}

function checked(value: DateValue): DateValue | 'out-of-range' {
  return supported(value.start) && supported(value.end) ? value : 'out-of-range';
}

function parseToken(text: string, now: number): DateValue | 'out-of-range' | null {
  const m = TOKEN.exec(text);
  if (!m) return null;
  const a = anchor(m[1].toUpperCase(), now);
  let start = a.start;
  for (const o of m[4].matchAll(OFFSET)) {
    start = shift(start, Number(o[1]), o[2].toUpperCase());
    // Checked at every step: a huge offset loses precision, so +N then -N need not come back.
    if (!supported(start)) return 'out-of-range';
  }
  return checked(period(start, a.precision));
}

/**
 * A date literal or token; null when the text is neither; 'out-of-range' when it is one but lies (or
 * passes, while its offsets are applied) outside years 1-9999, which no engine stores.
 */
export function parseDateValue(text: string, now: number): DateValue | 'out-of-range' | null {
  return parseToken(text.trim(), now) ?? parseIsoLike(text.trim());
}
