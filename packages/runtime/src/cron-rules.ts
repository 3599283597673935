import { parseExpression } from 'cron-parser';
import { AppError, quoteInput } from '@quarry/errors';

/**
 * When the fields alone cannot settle it, the upcoming runs compared: those of the next 8 days, at most
 * 200, and for at most WALK_BUDGET_MS. cron-parser walks time field by field, up to tens of ms per run
 * in a time zone for a sparse day field (`L`), on the thread that serves every call; the budget keeps one
 * check from holding it. A pair of runs closer than the minimum only at a month's or year's turn is not
 * load the minimum exists to stop.
 */
const RUNS_CHECKED = 200;
const SPAN_CHECKED_MS = 8 * 24 * 3600 * 1000;
const WALK_BUDGET_MS = 5;
const HOUR_S = 3600;

type Fields = Record<'second' | 'minute' | 'hour', readonly number[]>;

/** The smallest step between the sorted values, and with `cycle` the step from the last round to the first. */
function smallestGap(values: readonly number[], cycle?: number): number {
  const sorted = [...new Set(values)].sort((a, b) => a - b);
  let gap = Infinity;
  for (let i = 1; i < sorted.length; i++) gap = Math.min(gap, sorted[i]! - sorted[i - 1]!);
  if (cycle !== undefined && sorted.length > 0) gap = Math.min(gap, sorted[0]! + cycle - sorted[sorted.length - 1]!);
  return gap;
}

/**
 * What the time fields say about the gap between runs, in seconds: `atLeast`, a bound no two runs come
 * closer than (a changed daylight-saving offset can take an hour off gaps of hours or days), and
 * `seen`, a gap two runs within one minute, hour or day do have. Read from the finest field with more
 * than one value; the day fields only ever widen gaps.
 */
function gapsFromFields(f: Fields, zoned: boolean): { atLeast: number; seen: number } {
  const dst = zoned ? HOUR_S : 0;
  if (f.second.length > 1) return { atLeast: smallestGap(f.second, 60), seen: smallestGap(f.second) };
  if (f.minute.length > 1) return { atLeast: smallestGap(f.minute, 60) * 60, seen: smallestGap(f.minute) * 60 };
  if (f.hour.length > 1) return { atLeast: smallestGap(f.hour, 24) * HOUR_S - dst, seen: smallestGap(f.hour) * HOUR_S };
  return { atLeast: 24 * HOUR_S - dst, seen: Infinity };
}

function tooClose(cron: string, seconds: number, minIntervalSeconds: number): AppError {
  return AppError.invalid(
    `cron ${quoteInput(cron)} runs ${Math.round(seconds)} s apart at times; schedules may run at most every ${minIntervalSeconds} s (QUARRY_SCHEDULE_MIN_INTERVAL_S)`,
  );
}

/**
 * Checks a cron the way BullMQ will read it (the same cron-parser): 5 fields, or 6 with seconds first,
 * in `timeZone`, and no two runs closer than `minIntervalSeconds`. Returns the next run.
 */
export function checkCron(cron: string, timeZone: string, minIntervalSeconds: number, now: Date): Date {
  const fields = cron.trim().split(/\s+/);
  if (fields.length !== 5 && fields.length !== 6)
    throw AppError.invalid(
      `cron must have 5 fields (minute hour day month weekday) or 6 with seconds first, got ${fields.length} in ${quoteInput(cron)}`,
    );
  let runs: ReturnType<typeof parseExpression>;
  try {
    runs = parseExpression(cron, { tz: timeZone, currentDate: now });
  } catch (err) {
    throw AppError.invalid(
      `cron ${quoteInput(cron)} does not parse: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  const next = (): Date => (runs.next() as unknown as { toDate(): Date }).toDate();
  const zoned = !/^(utc|etc\/utc|gmt|etc\/gmt)$/i.test(timeZone);
  const gaps = gapsFromFields(runs.fields as unknown as Fields, zoned);
  let first: Date;
  try {
    first = next();
    if (gaps.seen < minIntervalSeconds) throw tooClose(cron, gaps.seen, minIntervalSeconds);
    if (gaps.atLeast >= minIntervalSeconds) return first;
    const until = performance.now() + WALK_BUDGET_MS;
    let previous = first.getTime();
    for (
      let i = 1;
      i < RUNS_CHECKED && previous - first.getTime() <= SPAN_CHECKED_MS && performance.now() < until && runs.hasNext();
      i++
    ) {
      const at = next().getTime();
      if (at - previous < minIntervalSeconds * 1000) throw tooClose(cron, (at - previous) / 1000, minIntervalSeconds);
      previous = at;
    }
  } catch (err) {
    if (err instanceof AppError) throw err;
    throw AppError.invalid(`cron ${quoteInput(cron)} never runs: ${err instanceof Error ? err.message : String(err)}`);
  }
  return first;
}
