import { isNumeric } from '@quarry/query-language';
import type { AxisValue } from '../../domain/axis-value';
import type { AxisSpec, DateGroup } from '../../domain/crosstab-spec';
import type { PeriodShift } from '../../domain/period-shift';
import { chIdent, isCalendarDate, type ClickHouseParam, type ClickHouseWhere } from './compile-clickhouse';

// The ClickHouse twin of pivot-sql.ts: an axis's grouped key, its reported label, and the outer-key test.

const DATE_FORMAT = { day: '%Y-%m-%d', month: '%Y-%m', year: '%Y' } as const;

/** A double as SQL: the shortest text that reads back as the same double (the spec's own numbers only). */
const sqlNumber = (n: number) => `toFloat64(${JSON.stringify(n)})`;
/** A time zone name as SQL: the spec's zone was checked against the tz database, and date functions need a constant. */
export const sqlZone = (zone: string) => `'${zone.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

const lpad = (sql: string, n: number) => `leftPad(toString(${sql}), ${n}, '0')`;

/**
 * The key of a time in a date group: a repeating part as its number, a period as its start. `z` is the
 * zone argument (`, 'Europe/Paris'`), or empty for a wall-clock time already held as UTC.
 */
export function chDateGroupKey(group: DateGroup, t: string, z: string): string {
  switch (group) {
    case 'monthOfYear':
      return `toMonth(${t}${z})`;
    case 'dayOfWeek':
      return `toDayOfWeek(${t}, 0${z})`;
    case 'hourOfDay':
      return `toHour(${t}${z})`;
    case 'year':
      return `toStartOfYear(${t}${z})`;
    case 'quarter':
      return `toStartOfQuarter(${t}${z})`;
    case 'month':
      return `toStartOfMonth(${t}${z})`;
    case 'week':
      return `toMonday(${t}${z})`;
    case 'day':
      return `toDate32(${t}${z})`;
    case 'hour':
      // Grouped as local wall-clock text: the two 01:00 hours of a DST fall-back are one key, as DuckDB's
      // local timestamps make them. Formatted, not toStartOfHour: in a zone whose offset is not whole hours
      // (Lord Howe's +10:30 in winter) toStartOfHour's hour was an hour off around its changes.
      return `formatDateTime(${t}, '%Y-%m-%dT%H'${z})`;
  }
}

/**
 * An axis value as the pivot groups it: the stored value; for dates the start of its day, month or year
 * (timestamps are stored in UTC), or of its date group in the spec's zone (each function given the zone);
 * for bins the bin's index. On a period comparison's shifted field, from each record's wall-clock time
 * moved forward by the shift (clickhouse-pivot-shift.ts).
 */
export function chGroupedKey(
  a: AxisSpec,
  columnTypes: ReadonlyMap<string, string>,
  timeZone: string,
  shift?: PeriodShift,
): string {
  const f = a.field;
  const col = chIdent(f.name);
  if (shift && f.name === shift.field) {
    // Every axis on the field groups by the compared period: a group's key moves by whole periods, so the
    // record's own period start is moved (no wall-clock conversion per record). Hours are text keys.
    if (shift.onKeys && a.dateGroup && a.dateGroup !== 'hour')
      return chAdd(chGroupedKey(a, columnTypes, timeZone), shift.unit, shift.n);
    // The shifted time is wall-clock time held as UTC: grouped in UTC, never converted again.
    const t = chShiftedTime(col, columnTypes.get(f.name), timeZone, shift);
    return chDateGroupKey(a.dateGroup ?? f.grain ?? 'day', t, '');
  }
  if (a.bin) {
    // floor((x - o) / w), corrected so that o + k·w <= x < o + (k+1)·w holds exactly in doubles (pivot-sql.ts).
    const x = `toFloat64(${col})`;
    const o = sqlNumber(a.bin.origin);
    const w = sqlNumber(a.bin.width);
    const k = `floor((${x} - ${o}) / ${w})`;
    return `(${k} + multiIf(${x} < ${o} + ${k} * ${w}, -1, ${x} >= ${o} + (${k} + 1) * ${w}, 1, 0))`;
  }
  // Integers group as the doubles they are reported as: two past 2^53 that one double stands for are one
  // key, as the DuckDB adapter's roll-up makes them (else two rows would carry the same key).
  if (f.type === 'integer') return `toFloat64(${col})`;
  if (f.type !== 'date') return col;
  const calendar = isCalendarDate(columnTypes.get(f.name));
  if (a.dateGroup) {
    // A calendar date has no hour: 0 (its day's first hour), as DuckDB's hour(DATE).
    if (calendar && a.dateGroup === 'hourOfDay') return `if(${col} IS NULL, NULL, 0)`;
    if (calendar && a.dateGroup === 'hour') return `concat(formatDateTime(${col}, '%Y-%m-%d'), 'T00')`;
    return chDateGroupKey(a.dateGroup, col, calendar ? '' : `, ${sqlZone(timeZone)}`);
  }
  const grain = f.grain ?? 'day';
  const utc = calendar ? '' : ", 'UTC'";
  if (grain === 'month') return `toStartOfMonth(${col}${utc})`;
  if (grain === 'year') return `toStartOfYear(${col}${utc})`;
  return calendar ? col : `toDate32(${col}${utc})`;
}

/** The value reported for a grouped key: blank text merged with null, numbers as doubles, dates as text. */
export function chAxisLabel(a: AxisSpec, key: string): string {
  const f = a.field;
  if (a.bin) return `toFloat64(${key})`;
  switch (a.dateGroup) {
    case undefined:
      break;
    case 'year':
      return `formatDateTime(${key}, '%Y')`;
    case 'quarter':
      return `concat(formatDateTime(${key}, '%Y'), '-Q', toString(toQuarter(${key})))`;
    case 'month':
      return `formatDateTime(${key}, '%Y-%m')`;
    case 'week':
      return `concat(${lpad(`toISOYear(${key})`, 4)}, '-W', ${lpad(`toISOWeek(${key})`, 2)})`;
    case 'day':
      return `formatDateTime(${key}, '%Y-%m-%d')`;
    case 'hour':
      return key;
    case 'monthOfYear':
    case 'hourOfDay':
      return lpad(key, 2);
    case 'dayOfWeek':
      return `toString(${key})`;
  }
  if (f.type === 'date') return `formatDateTime(${key}, '${DATE_FORMAT[f.grain ?? 'day']}')`;
  if (f.type === 'string') return `nullIf(${key}, '')`;
  if (isNumeric(f.type)) return `toFloat64(${key})`;
  return key;
}

/** The key a record groups under, with blank text merged into null per record (the raw grouping). */
export function chRecordKey(
  a: AxisSpec,
  columnTypes: ReadonlyMap<string, string>,
  timeZone: string,
  shift?: PeriodShift,
): string {
  const key = chGroupedKey(a, columnTypes, timeZone, shift);
  return a.field.type === 'string' && !a.bin && !a.dateGroup ? `nullIf(${key}, '')` : key;
}

/**
 * SQL true for the records whose key on `a` is one of `values` (as the pivot reports keys), the values
 * bound as one typed array parameter `{name:Array(T)}` that ClickHouse hashes into a set.
 */
export function chMemberSql(
  a: AxisSpec,
  values: readonly AxisValue[],
  columnTypes: ReadonlyMap<string, string>,
  timeZone: string,
  name: string,
  shift?: PeriodShift,
): ClickHouseWhere {
  const key = chGroupedKey(a, columnTypes, timeZone, shift);
  const present = values.filter((v): v is string | number | boolean => v !== null && v !== '');
  const bin = a.bin;
  const tested = bin ? key : chAxisLabel(a, key);
  // The reported key of a bin is its lower bound: back to the bin's index, which the records carry.
  const listed: ClickHouseParam = bin ? present.map((v) => Math.round((Number(v) - bin.origin) / bin.width)) : present;
  const type =
    bin || (isNumeric(a.field.type) && !a.dateGroup) ? 'Float64' : a.field.type === 'boolean' ? 'Bool' : 'String';
  const tests: string[] = [];
  const params: Record<string, ClickHouseParam> = {};
  if (present.length) {
    tests.push(`${tested} IN (SELECT arrayJoin({${name}:Array(${type})}))`);
    params[name] = type === 'String' ? present.map(String) : listed;
  }
  if (present.length < values.length) tests.push(`${tested} IS NULL`);
  return { sql: tests.length ? `(${tests.join(' OR ')})` : 'false', params };
}

/**
 * SQL true for the records whose key on `a` is none of `values` (a blank key only when null is not
 * listed): the records of an "Other" row or column.
 */
export function chNotMemberSql(
  a: AxisSpec,
  values: readonly AxisValue[],
  columnTypes: ReadonlyMap<string, string>,
  timeZone: string,
  name: string,
  shift?: PeriodShift,
): ClickHouseWhere {
  const m = chMemberSql(a, values, columnTypes, timeZone, name, shift);
  // A blank key not listed makes the membership null, not false: ifNull keeps that record.
  return { sql: `NOT ifNull(${m.sql}, 0)`, params: m.params };
}

/**
 * A date field's values as wall-clock time in the zone, held as a UTC DateTime64(6) (naive local time, as
 * DuckDB's local timestamps): a calendar date is its own local midnight. Through text, because
 * timeZoneOffset misreads some historic offsets (Paris in 1901 came out a day off).
 */
export function chLocalTime(col: string, columnType: string | undefined, timeZone: string): string {
  if (isCalendarDate(columnType) || timeZone === 'UTC') return `toDateTime64(${col}, 6, 'UTC')`;
  return `toDateTime64(toString(${col}, ${sqlZone(timeZone)}), 6, 'UTC')`;
}

const ADD = { month: 'addMonths', day: 'addDays', hour: 'addHours' } as const;

/** A value moved forward (negative: back) by whole units: months from the 31st end the shorter month, as in DuckDB. */
export const chAdd = (t: string, unit: PeriodShift['unit'], n: number) => `${ADD[unit]}(${t}, ${n})`;

/**
 * A record's wall-clock time in the zone moved forward by the shift: days to years on the wall clock,
 * hours in elapsed time (the stored instant moves, then is read in the zone), as pivot-sql.ts.
 */
export function chShiftedTime(
  col: string,
  columnType: string | undefined,
  timeZone: string,
  shift: Pick<PeriodShift, 'unit' | 'n'>,
): string {
  if (shift.unit === 'hour' && !isCalendarDate(columnType))
    return chLocalTime(chAdd(col, 'hour', shift.n), columnType, timeZone);
  return chAdd(chLocalTime(col, columnType, timeZone), shift.unit, shift.n);
}
