import type { CalendarGroup } from '@quarry/contract';
import { ident, type DuckDBValue, type LoadedTable } from '@quarry/snapshots';
import type { AxisSpec, CrosstabSpec } from '../../domain/crosstab-spec';
import type { PeriodShift } from '../../domain/period-shift';
import { axisLabel, interval, localTime, shiftedTime } from './pivot-sql';

/**
 * The shifted records of a period comparison end at the data's last record, so a partial last period is
 * compared with the same elapsed span of the one before (none of its later records).
 */
export function shiftCut(
  spec: Pick<CrosstabSpec, 'shift' | 'timeZone'>,
  columnTypes: ReadonlyMap<string, string>,
  name = '__shift',
): Array<{ sql: string; flag: string; params: Record<string, DuckDBValue> }> {
  const shift = spec.shift;
  if (!shift?.cut || !shift.safe) return [];
  const col = ident(shift.field);
  const time = shiftedTime(col, columnTypes.get(shift.field), spec.timeZone, shift);
  const safe = `CAST($${name}_safe AS TIMESTAMP)`;
  const cut = `CAST($${name}_cut AS TIMESTAMP)`;
  return [
    {
      // Records stored before `safe` land before the last period: only the few after it are shifted here.
      sql: `(${col} < ${safe} OR ${time} <= ${cut})`,
      // The same test as a value of every record, never null (a record without a date is in no period):
      // CASE shifts only the records near the cut, where OR in a projection computed both sides for all.
      // Stored times past the cut less the shift by more than FAR shift past the cut whatever the zone.
      flag: `CASE WHEN ${col} < ${safe} THEN true WHEN ${col} > ${cut} - ${interval(shift)} + ${FAR} THEN false ELSE coalesce(${time} <= ${cut}, false) END`,
      params: { [`${name}_safe`]: shift.safe, [`${name}_cut`]: shift.cut },
    },
  ];
}

/** More than any change of a zone's offset: stored times this far before a bound are local times before it. */
const MARGIN = 'INTERVAL 2 DAY';
/**
 * More than a zone's offset and a month's end clamped (Jan 31 + 1 month is Feb 28) together, on either
 * side: a stored time this far past `cut - shift` is shifted past `cut`.
 */
const FAR = 'INTERVAL 10 DAY';
const TEXT = "'%Y-%m-%d %H:%M:%S.%f'";

const PERIOD: Record<CalendarGroup, string> = {
  hour: 'INTERVAL 1 HOUR',
  day: 'INTERVAL 1 DAY',
  week: 'INTERVAL 7 DAY',
  month: 'INTERVAL 1 MONTH',
  quarter: 'INTERVAL 3 MONTH',
  year: 'INTERVAL 12 MONTH',
};

/** The largest stored time of the field over the filtered records, as text (null without records). */
export function lastStoredSql(table: LoadedTable, where: string, field: string): string {
  return `SELECT strftime(CAST(max(${ident(field)}) AS TIMESTAMP), ${TEXT}) AS m FROM ${ident(table.table)} WHERE ${where}`;
}

/**
 * From the largest stored time `m` (lastStoredSql's, written back as a literal so the scans below skip
 * what lies before it): the last record's local time and its period's key, the stored time before which
 * records shift to before that period (safe), and whether the period before it reaches past the same
 * elapsed span (then the last period is partial and its comparison is cut). Only records near the end
 * are converted to local time.
 */
export function lastPeriodSql(
  table: LoadedTable,
  where: string,
  shift: PeriodShift,
  period: CalendarGroup,
  spec: CrosstabSpec,
  m: string,
): string {
  if (!/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{6}$/.test(m)) throw new Error(`not a stored time: ${m}`);
  const col = ident(shift.field);
  const type = table.columnTypes.get(shift.field);
  const local = localTime(col, type, spec.timeZone);
  const shifted = shiftedTime(col, type, spec.timeZone, shift);
  const base = [...spec.rows, ...spec.columns].find((a) => a.field.name === shift.field) as AxisSpec;
  const key = axisLabel({ ...base, dateGroup: period }, 'b.lk');
  const from = ident(table.table);
  const last = `TIMESTAMP '${m}'`;
  // Records that can shift past the last record (local + shift > last needs local > last - shift) and
  // before the end of its period (local + shift < end needs local < end - shift), with the margin of a
  // zone's offset. Both bounds are literals, so the scan skips what lies outside them: the end of the
  // period is bounded through the largest stored time (adding and taking months keeps the order).
  const reach = `${col} >= ${last} - ${interval(shift)} - ${MARGIN} AND ${col} < ${last} + ${MARGIN} + ${PERIOD[period]} - ${interval(shift)} + ${MARGIN}`;
  return `WITH lst AS (SELECT max(${local}) AS last FROM ${from} WHERE ${where} AND ${col} >= ${last} - ${MARGIN}),
  b AS (SELECT last, date_trunc('${period}', last) AS lk, date_trunc('${period}', last) - ${interval(shift)} - ${MARGIN} AS safe FROM lst)
SELECT strftime(CAST(b.last AS TIMESTAMP), ${TEXT}) AS last, ${key} AS key, strftime(CAST(b.safe AS TIMESTAMP), ${TEXT}) AS safe,
  EXISTS (SELECT 1 FROM ${from} WHERE ${where} AND ${reach}
    AND ${shifted} > (SELECT last FROM b) AND date_trunc('${period}', ${shifted}) = (SELECT lk FROM b)) AS partial
FROM b`;
}
