import type { CalendarGroup } from '@quarry/contract';
import type { AxisSpec, CrosstabSpec } from '../../domain/crosstab-spec';
import { shiftOf } from '../../domain/period-compare';
import type { PeriodShift } from '../../domain/period-shift';
import { chAdd, chAxisLabel, chDateGroupKey, chLocalTime, chShiftedTime } from './clickhouse-pivot-sql';
import { chIdent, type ClickHouseWhere } from './compile-clickhouse';

// The ClickHouse twin of pivot-shift.ts: the last period of a period comparison and the cut of a partial one.

/** A stored or wall-clock time as a typed parameter: text "YYYY-MM-DD hh:mm:ss.ffffff", read as UTC. */
const TIME = "DateTime64(6, 'UTC')";

/** More than any change of a zone's offset: stored times this far before a bound are local times before it. */
const MARGIN_DAYS = 2;

/** `t` moved back by the shift, a period and the margin, in that order (as DuckDB's interval arithmetic). */
const back = (t: string, ...by: Array<Pick<PeriodShift, 'unit' | 'n'>>) =>
  by.reduce((sql, s) => chAdd(sql, s.unit, -s.n), t);

/** The start of a wall-clock time's period, as a wall-clock time (held as UTC). */
function periodStart(period: CalendarGroup, t: string): string {
  if (period === 'hour') return `toStartOfHour(${t})`;
  return `toDateTime64(${chDateGroupKey(period, t, '')}, 6, 'UTC')`;
}

/** The text of a time as the DuckDB adapter writes it: "YYYY-MM-DD hh:mm:ss.ffffff". */
const asText = (t: string) => `toString(toDateTime64(${t}, 6, 'UTC'))`;

/**
 * The shifted records of a period comparison end at the data's last record, so a partial last period is
 * compared with the same elapsed span of the one before (none of its later records).
 */
export function chShiftCut(spec: CrosstabSpec, columnTypes: ReadonlyMap<string, string>): ClickHouseWhere[] {
  const shift = spec.shift;
  if (!shift?.cut || !shift.safe) return [];
  const col = chIdent(shift.field);
  const time = chShiftedTime(col, columnTypes.get(shift.field), spec.timeZone, shift);
  // Records stored before `safe` land before the last period: only the few after it are shifted here.
  return [
    {
      sql: `(${col} < {__shift_safe:${TIME}} OR ${time} <= {__shift_cut:${TIME}})`,
      params: { __shift_safe: shift.safe, __shift_cut: shift.cut },
    },
  ];
}

/** The largest stored time of the field over the filtered records, as text (null without records). */
export function chLastStoredSql(from: string, where: string, field: string): string {
  const col = chIdent(field);
  return `SELECT if(count(${col}) = 0, NULL, ${asText(`max(${col})`)}) AS m FROM ${from} WHERE ${where}`;
}

/**
 * The last record's local time, from the records stored within the margin of the largest stored time
 * `{__last_stored}` (chLastStoredSql's).
 */
export function chLastLocalSql(
  from: string,
  where: string,
  field: string,
  columnTypes: ReadonlyMap<string, string>,
  timeZone: string,
): string {
  const col = chIdent(field);
  const local = chLocalTime(col, columnTypes.get(field), timeZone);
  const near = back(`{__last_stored:${TIME}}`, { unit: 'day', n: MARGIN_DAYS });
  return `SELECT if(count(${col}) = 0, NULL, ${asText(`max(${local})`)}) AS last FROM ${from} WHERE ${where} AND ${col} >= ${near}`;
}

/**
 * From the largest stored time and the last record's local time `{__last_local}`: the last period's key,
 * the stored time before which records shift to before that period (safe), and whether the period `shift`
 * before it reaches past the same elapsed span (then the last period is partial and its comparison is
 * cut). Only records near the end are converted to local time.
 */
export function chLastPeriodSql(
  from: string,
  where: string,
  shift: PeriodShift,
  period: CalendarGroup,
  spec: CrosstabSpec,
  columnTypes: ReadonlyMap<string, string>,
): string {
  const col = chIdent(shift.field);
  const shifted = chShiftedTime(col, columnTypes.get(shift.field), spec.timeZone, shift);
  const base = [...spec.rows, ...spec.columns].find((a) => a.field.name === shift.field) as AxisSpec;
  const last = `{__last_local:${TIME}}`;
  const lk = periodStart(period, last);
  const key = chAxisLabel({ ...base, dateGroup: period }, chDateGroupKey(period, last, ''));
  const margin = { unit: 'day', n: MARGIN_DAYS } as const;
  // Records that can shift into the last period: within a period, the shift and the margin of the end.
  const onePeriod = shiftOf(shift.field, { to: 'previousPeriod', as: 'value', period });
  const reach = back(`{__last_stored:${TIME}}`, shift, onePeriod, margin);
  return `SELECT ${key} AS key, ${asText(back(lk, shift, margin))} AS safe,
  (SELECT count() > 0 FROM ${from} WHERE ${where} AND ${col} >= ${reach}
    AND ${shifted} > ${last} AND ${periodStart(period, shifted)} = ${lk}) AS partial`;
}
