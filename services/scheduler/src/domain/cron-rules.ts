import { parseExpression } from 'cron-parser';
import { AppError, quoteInput } from '@quarry/errors';

/**
 * The upcoming runs compared: those of the next 8 days (every daily and weekly pattern, and the step from
 * one day or week to the next), at most 200. cron-parser walks time field by field, a few ms per run in a
 * time zone, so the check stays within tens of ms of the gateway's time; a pair of runs closer than the
 * minimum only at a month's or year's turn is not load the minimum exists to stop.
 */
const RUNS_CHECKED = 200;
const SPAN_CHECKED_MS = 8 * 24 * 3600 * 1000;

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
  let first: Date;
  try {
    first = next();
    let previous = first.getTime();
    for (let i = 1; i < RUNS_CHECKED && previous - first.getTime() <= SPAN_CHECKED_MS && runs.hasNext(); i++) {
      const at = next().getTime();
      if (at - previous < minIntervalSeconds * 1000)
        throw AppError.invalid(
          `cron ${quoteInput(cron)} runs ${Math.round((at - previous) / 1000)} s apart at times; schedules may run at most every ${minIntervalSeconds} s (QUARRY_SCHEDULE_MIN_INTERVAL_S)`,
        );
      previous = at;
    }
  } catch (err) {
    if (err instanceof AppError) throw err;
    throw AppError.invalid(`cron ${quoteInput(cron)} never runs: ${err instanceof Error ? err.message : String(err)}`);
  }
  return first;
}
