import type { AxisValue } from './axis-value';
import type { AxisSpec } from './crosstab-spec';
import { otherOf } from './other-key';

/*
 * Drill-through: for each key of a crosstab, a query in Quarry's own language that selects exactly the
 * records grouped under it, so that `(<crosstab query>) AND <row query> AND <column query>` run through
 * QUERIES.EXECUTE returns the records counted in that cell. Each clause mirrors how the engine groups:
 * exact text (`Field:=value`), equal numbers and booleans, the grain's period for dates, [start, end)
 * ranges for date groups and bins, and "has no value" for (blank).
 */

/** What a backslash escapes in the query language (query-lexer.ts ESCAPABLE), plus "=" leading a value. */
const ESCAPED = /[+\-!(){}[\]^"?:\\&|'/~* \t\r\n\f=<>]/g;
const escapeText = (s: string) => s.replace(ESCAPED, (c) => `\\${c}`);

/** `Field:` as the query language reads any field name. */
const fieldRef = (name: string) => `${escapeText(name)}:`;

const DAY = 86_400_000;

/** Building a formatter costs far more than using one: one per zone, kept. */
const formatters = new Map<string, Intl.DateTimeFormat>();
function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(timeZone, f);
  }
  return f;
}

/** Wall-clock time of an instant in a zone, written as if UTC, as the zone's rules say it (to the second). */
function formattedWallClock(ms: number, timeZone: string): number {
  const parts = formatter(timeZone).formatToParts(new Date(ms));
  const get = (type: string) => Number(parts.find((p) => p.type === type)?.value ?? 0);
  const y = get('year');
  const utc = Date.UTC(y, get('month') - 1, get('day'), get('hour'), get('minute'), get('second'));
  // Date.UTC reads years 0-99 as 1900-1999.
  return y < 100 ? new Date(utc).setUTCFullYear(y) : utc;
}

const HOUR = 3_600_000;
const SECOND = 1000;
/** Past this many hours a zone's kept offsets are dropped (about 11 years of hours, a few MB at most). */
const OFFSETS_KEPT = 100_000;
/**
 * Per zone, the offset at the first second of each UTC hour asked about. formatToParts costs microseconds
 * and a year of hourly keys asks it 10^5 times; zones change offset a few times a year at most, so nearly
 * every hour is read once and then looked up.
 */
const hourStartOffsets = new Map<string, Map<number, number>>();

function hourStartOffset(hour: number, timeZone: string): number {
  let zone = hourStartOffsets.get(timeZone);
  if (!zone) hourStartOffsets.set(timeZone, (zone = new Map()));
  let offset = zone.get(hour);
  if (offset === undefined) {
    offset = formattedWallClock(hour * HOUR, timeZone) - hour * HOUR;
    if (zone.size >= OFFSETS_KEPT) zone.clear();
    zone.set(hour, offset);
  }
  return offset;
}

/**
 * The offset of a whole UTC hour, or null when the hour and the next start on different offsets: a change
 * may fall inside it (or exactly at its end, where asking the formatter is merely slower, never wrong).
 */
function hourOffset(hour: number, timeZone: string): number | null {
  const offset = hourStartOffset(hour, timeZone);
  return hourStartOffset(hour + 1, timeZone) === offset ? offset : null;
}

/** Wall-clock time of an instant in a zone, written as if UTC (to the second, as formatToParts reads it). */
function wallClock(ms: number, timeZone: string): number {
  const offset = hourOffset(Math.floor(ms / HOUR), timeZone);
  return offset === null ? formattedWallClock(ms, timeZone) : Math.floor(ms / SECOND) * SECOND + offset;
}

/**
 * The first instant whose wall-clock time in the zone is at or after `wall` (a wall time written as if
 * UTC): where a day or hour starts in that zone, also across a daylight-saving gap (the wall time that
 * never happened starts at the transition) or repeat (the first of the two).
 */
export function zonedStart(wall: number, timeZone: string): number {
  if (timeZone === 'UTC') return wall;
  const offsets = new Set([-DAY, 0, DAY].map((d) => wallClock(wall + d, timeZone) - (wall + d)));
  const exact = [...offsets].map((o) => wall - o).filter((t) => wallClock(t, timeZone) === wall);
  if (exact.length) return Math.min(...exact);
  // In a gap: the earliest instant past it, found by halving between the two offsets' guesses.
  let lo = wall - Math.max(...offsets);
  let hi = wall - Math.min(...offsets);
  while (hi - lo > 1000) {
    const mid = lo + Math.floor((hi - lo) / 2000) * 1000;
    if (wallClock(mid, timeZone) >= wall) hi = mid;
    else lo = mid;
  }
  return hi;
}

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

/** An instant as the query language reads one: UTC, to the second (Z). */
function instantText(ms: number): string {
  const d = new Date(ms);
  return `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}T${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}Z`;
}

const dayText = (ms: number) => instantText(ms).slice(0, 10);

/** The wall-clock period [start, end) a date group's key names, as wall times written as if UTC. */
function groupPeriod(axis: AxisSpec, key: string): [number, number] | null {
  const utc = (y: number, m: number, d = 1, h = 0) => {
    const t = Date.UTC(y, m, d, h);
    return y < 100 ? new Date(t).setUTCFullYear(y) : t;
  };
  const n = (key.match(/\d+/g) ?? []).map(Number);
  const shape: Record<string, RegExp> = {
    year: /^\d{4}$/,
    quarter: /^\d{4}-Q[1-4]$/,
    month: /^\d{4}-\d{2}$/,
    week: /^\d{4}-W\d{2}$/,
    day: /^\d{4}-\d{2}-\d{2}$/,
    hour: /^\d{4}-\d{2}-\d{2}T\d{2}$/,
  };
  const group = axis.dateGroup;
  if (!group || !shape[group]?.test(key)) return null;
  const [y, a = 1, b = 1, h = 0] = n;
  switch (group) {
    case 'year':
      return [utc(y, 0), utc(y + 1, 0)];
    case 'quarter':
      return [utc(y, (a - 1) * 3), utc(y, a * 3)];
    case 'month':
      return [utc(y, a - 1), utc(y, a)];
    case 'week': {
      // ISO week 1 holds January 4th; weeks start on Monday.
      const jan4 = utc(y, 0, 4);
      const monday = jan4 - ((new Date(jan4).getUTCDay() + 6) % 7) * DAY;
      const start = monday + (a - 1) * 7 * DAY;
      return [start, start + 7 * DAY];
    }
    case 'day':
      return [utc(y, a - 1, b), utc(y, a - 1, b + 1)];
    case 'hour':
      return [utc(y, a - 1, b, h), utc(y, a - 1, b, h + 1)];
    default:
      return null;
  }
}

export interface DrillContext {
  timeZone: string;
  /** Clauses already written, by axis and value: a key part repeats down the rows. */
  memo?: Map<string, string | null>;
  /** Whether the field's column holds calendar dates (no time of day), which are their own local date. */
  calendarDate: (field: string) => boolean;
}

/** One key part of one axis as a clause; null when none can say it. */
export function keyClause(axis: AxisSpec, value: AxisValue, ctx: DrillContext): string | null {
  const id = `${axis.name}\u0000${JSON.stringify(value)}`;
  const known = ctx.memo?.get(id);
  if (known !== undefined) return known;
  const clause = writeClause(axis, value, ctx);
  ctx.memo?.set(id, clause);
  return clause;
}

function writeClause(axis: AxisSpec, value: AxisValue, ctx: DrillContext): string | null {
  const f = fieldRef(axis.field.name);
  if (value === null || value === '') return `NOT ${f}*`;
  if (axis.bin && typeof value === 'number') {
    // The engine puts x in bin k when o + k·w <= x < o + (k+1)·w, computed in doubles: the same bounds.
    const { origin: o, width: w } = axis.bin;
    const k = Math.round((value - o) / w);
    return `${f}[${String(o + k * w)} TO ${String(o + (k + 1) * w)}}`;
  }
  if (axis.dateGroup && typeof value === 'string') {
    const calendar = ctx.calendarDate(axis.field.name);
    // A calendar date is midnight of its day, so an hour key of one (always hour 00) holds the whole
    // day: its range ends at the next midnight, not an hour on, which as days would be an empty range.
    const range = ([start, end]: [number, number]) =>
      calendar
        ? `${f}[${dayText(start)} TO ${dayText(Math.ceil(end / DAY) * DAY)}}`
        : `${f}[${instantText(zonedStart(start, ctx.timeZone))} TO ${instantText(zonedStart(end, ctx.timeZone))}}`;
    const period = groupPeriod(axis, value);
    if (period) return range(period);
    // A repeating part (dayOfWeek, monthOfYear, hourOfDay) however many years it spans: the query
    // language's date part, in the crosstab's zone (a calendar date is its own local date).
    const zone = calendar || ctx.timeZone === 'UTC' ? '' : `@${escapeText(ctx.timeZone)}`;
    return `${f}@${axis.dateGroup}=${Number(value)}${zone}`;
  }
  if (axis.field.type === 'string') return `${f}=${escapeText(String(value))}`;
  if (typeof value === 'number') return `${f}${escapeText(String(value))}`;
  if (typeof value === 'boolean') return `${f}${value}`;
  // A date at the field's grain: the query language reads YYYY, YYYY-MM and YYYY-MM-DD as that period.
  return `${f}${escapeText(String(value))}`;
}

/** A whole key (a row's or a column's, or a subtotal's shorter one) as one query; null if a part has none. */
export function keyQuery(axes: readonly AxisSpec[], key: readonly AxisValue[], ctx: DrillContext): string | null {
  if (key.length === 0) return '*';
  const other = otherOf(key);
  if (other) {
    // Every record whose outermost key is none of those shown: the same complement the engine read.
    if (other.kept.length === 0) return '*';
    const kept = other.kept.map((v) => keyClause(axes[0], v, ctx));
    return kept.every((c): c is string => c !== null) ? `NOT (${kept.join(' OR ')})` : null;
  }
  const clauses = key.map((v, i) => keyClause(axes[i], v, ctx));
  return clauses.every((c): c is string => c !== null) ? clauses.join(' AND ') : null;
}
