import { isNumeric } from '@quarry/query-language';
import { ident, listParam, type DuckDBValue } from '@quarry/snapshots';
import type { AxisValue } from '../../domain/axis-value';
import type { AxisSpec, DateGroup } from '../../domain/crosstab-spec';
import type { PeriodShift } from '../../domain/period-shift';

const DATE_FORMAT = { day: '%Y-%m-%d', month: '%Y-%m', year: '%Y' } as const;

const sqlText = (s: string) => `'${s.replace(/'/g, "''")}'`;
/** A double as SQL: the shortest text that reads back as the same double. */
const sqlNumber = (n: number) => `CAST(${JSON.stringify(n)} AS DOUBLE)`;

/**
 * A date field's values as wall-clock time in the crosstab's zone. Timestamps are stored in UTC; a
 * DATE has no time of day and is its own local date.
 */
export function localTime(col: string, columnType: string | undefined, timeZone: string): string {
  if (columnType === 'DATE') return col;
  if (columnType?.startsWith('TIMESTAMP WITH TIME ZONE')) return `timezone(${sqlText(timeZone)}, ${col})`;
  if (timeZone === 'UTC') return col;
  return `timezone(${sqlText(timeZone)}, timezone('UTC', ${col}))`;
}

const lpad = (sql: string, n: number) => `lpad(CAST(${sql} AS VARCHAR), ${n}, '0')`;

/**
 * An axis value as the pre-aggregate groups it: the stored value; for dates the start of its day, month
 * or year, or of its date group; for bins the bin's index. No row is formatted as text: `axisLabel`
 * formats once per group.
 */
export function groupedKey(
  a: AxisSpec,
  columnTypes: ReadonlyMap<string, string>,
  timeZone: string,
  shift?: PeriodShift,
): string {
  const f = a.field;
  const col = ident(f.name);
  if (shift && f.name === shift.field && !shift.onKeys)
    return shiftedKey(a, col, columnTypes.get(f.name), timeZone, shift);
  if (a.bin) {
    // floor((x - o) / w), corrected so that o + k·w <= x < o + (k+1)·w holds exactly in doubles: the
    // drill-through range of bin k is written with those two bounds and must select the same records.
    const x = `CAST(${col} AS DOUBLE)`;
    const o = sqlNumber(a.bin.origin);
    const w = sqlNumber(a.bin.width);
    const k = `floor((${x} - ${o}) / ${w})`;
    return `(${k} + CASE WHEN ${x} < ${o} + ${k} * ${w} THEN -1 WHEN ${x} >= ${o} + (${k} + 1) * ${w} THEN 1 ELSE 0 END)`;
  }
  if (f.type !== 'date') return col;
  const type = columnTypes.get(f.name);
  if (a.dateGroup) return dateGroupKey(a.dateGroup, localTime(col, type, timeZone));
  const grain = f.grain ?? 'day';
  if (grain !== 'day') return `date_trunc('${grain}', ${col})`;
  return type === 'DATE' ? col : `CAST(${col} AS DATE)`;
}

/** The value reported for a grouped key: blank text merged with null, numbers as doubles, dates as text. */
export function axisLabel(a: AxisSpec, sqlKey: string, shift?: PeriodShift): string {
  const f = a.field;
  // Keys of the period itself move by whole periods: shifting the group's key is shifting its records.
  const key = shift?.onKeys && f.name === shift.field ? `(${sqlKey} + ${interval(shift)})` : sqlKey;
  if (a.bin) return `CAST(${key} AS DOUBLE)`;
  switch (a.dateGroup) {
    case undefined:
      break;
    case 'year':
      return `strftime(${key}, '%Y')`;
    case 'quarter':
      return `strftime(${key}, '%Y') || '-Q' || quarter(${key})`;
    case 'month':
      return `strftime(${key}, '%Y-%m')`;
    case 'week':
      return `${lpad(`isoyear(${key})`, 4)} || '-W' || ${lpad(`week(${key})`, 2)}`;
    case 'day':
      return `strftime(${key}, '%Y-%m-%d')`;
    case 'hour':
      return `strftime(${key}, '%Y-%m-%dT%H')`;
    case 'monthOfYear':
    case 'hourOfDay':
      return lpad(key, 2);
    case 'dayOfWeek':
      return `CAST(${key} AS VARCHAR)`;
  }
  if (f.type === 'date') return `strftime(${key}, '${DATE_FORMAT[f.grain ?? 'day']}')`;
  if (f.type === 'string') return `nullif(${key}, '')`;
  if (isNumeric(f.type)) return `CAST(${key} AS DOUBLE)`;
  return key;
}

/** A filter and its bound parameters (compileWhere's, and lists of kept outer keys). */
export interface BoundWhere {
  sql: string;
  params: Record<string, DuckDBValue>;
}

/**
 * SQL true for the records whose key on `a` is one of `values` (as the pivot reports keys), with the
 * values bound as one list parameter `$name`: a semi-join on a hash of them, where the same values
 * written as an IN list are compared one by one and a long list took a hundred times as long.
 */
export function memberSql(
  a: AxisSpec,
  values: readonly AxisValue[],
  columnTypes: ReadonlyMap<string, string>,
  timeZone: string,
  name: string,
  opts: { shortList?: number; shift?: PeriodShift } = {},
): { sql: string; params: Record<string, DuckDBValue> } {
  const shift = opts.shift;
  const key = groupedKey(a, columnTypes, timeZone, shift);
  const present = values.filter((v): v is string | number | boolean => v !== null && v !== '');
  // The reported key of a bin is its lower bound: back to the bin's index, which the records carry.
  const bin = a.bin;
  const tested = bin ? key : axisLabel(a, key, shift);
  const listed = bin ? present.map((v) => Math.round((Number(v) - bin.origin) / bin.width)) : present;
  const tests: string[] = [];
  const params: Record<string, DuckDBValue> = {};
  if (listed.length) {
    // A short list is looked up in place: as fast as no filter, where the semi-join cost half a scan
    // more. A long one is hashed once, which per-record lookups would not be.
    const short = opts.shortList !== undefined && listed.length <= opts.shortList;
    tests.push(short ? `list_contains($${name}, ${tested})` : `${tested} IN (SELECT unnest($${name}))`);
    params[name] = listParam(listed);
  }
  if (present.length < values.length) tests.push(`${tested} IS NULL`);
  return { sql: tests.length ? `(${tests.join(' OR ')})` : 'false', params };
}

/** Lists up to this long are searched in place by `notMemberSql` (the kept keys of an Other pass). */
export const SHORT_LIST = 256;

/**
 * SQL true for the records whose key on `a` is none of `values` (a blank key only when null is not
 * listed): the records of an "Other" row or column.
 */
export function notMemberSql(
  a: AxisSpec,
  values: readonly AxisValue[],
  columnTypes: ReadonlyMap<string, string>,
  timeZone: string,
  name: string,
  shift?: PeriodShift,
): { sql: string; params: Record<string, DuckDBValue> } {
  const m = memberSql(a, values, columnTypes, timeZone, name, { shortList: SHORT_LIST, shift });
  // A blank key not listed makes the membership null, not false: coalesce keeps that record.
  return { sql: `NOT coalesce(${m.sql}, false)`, params: m.params };
}

/** A record's wall-clock time in the zone moved forward by the shift (a month from the 31st ends the next month). */
export function shiftedTime(col: string, columnType: string | undefined, timeZone: string, shift: PeriodShift): string {
  // Hours move in elapsed time (the hour before 03:00 after a spring-forward gap is 01:00), so the stored
  // instant moves before it is read on the wall clock; days, weeks and months move on the calendar.
  if (shift.unit === 'hour' && columnType !== 'DATE')
    return localTime(`(${col} + ${interval(shift)})`, columnType, timeZone);
  return `(${localTime(col, columnType, timeZone)} + ${interval(shift)})`;
}

/**
 * The key of a date axis on the shifted field: computed from the shifted local time, so the previous
 * period's records carry the current period's key (the wall clock moves for days to years: a month
 * from 1 March 00:30 in Paris is 1 April, whatever the offsets; an hour is an hour of elapsed time).
 */
function shiftedKey(a: AxisSpec, col: string, type: string | undefined, timeZone: string, shift: PeriodShift): string {
  return dateGroupKey(a.dateGroup ?? a.field.grain ?? 'day', shiftedTime(col, type, timeZone, shift));
}

/** A wall-clock time's key in a date group: a repeating part as its number, a period as its start. */
function dateGroupKey(group: DateGroup | 'day' | 'month' | 'year', local: string): string {
  switch (group) {
    case 'monthOfYear':
      return `month(${local})`;
    case 'dayOfWeek':
      return `isodow(${local})`;
    case 'hourOfDay':
      return `hour(${local})`;
    default:
      return `date_trunc('${group}', ${local})`;
  }
}

export const interval = (shift: Pick<PeriodShift, 'n' | 'unit'>) => `INTERVAL ${shift.n} ${shift.unit.toUpperCase()}`;
