/*
 * Period comparison computed here in plain JS from the records, independently of Quarry: wall-clock
 * parts with Intl in the zone, calendar arithmetic on them, keys and aggregates by hand.
 */

export interface TimedRec {
  /** UTC, as loaded: YYYY-MM-DDTHH:MM:SS. */
  date: string;
  carrier: string;
  delay: number;
  user: string;
}

/** A wall-clock time as the milliseconds of the same digits in UTC (no zone arithmetic after this). */
export type Naive = number;

const partsFormat = new Map<string, Intl.DateTimeFormat>();
export function localNaive(utc: string, timeZone: string): Naive {
  let f = partsFormat.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    partsFormat.set(timeZone, f);
  }
  const p = Object.fromEntries(f.formatToParts(new Date(`${utc}Z`)).map((x) => [x.type, x.value]));
  return Date.UTC(+p.year, +p.month - 1, +p.day, +p.hour, +p.minute, +p.second);
}

const daysIn = (y: number, m0: number) => new Date(Date.UTC(y, m0 + 1, 0)).getUTCDate();

/** Calendar arithmetic on the wall clock: months keep the day (the last day of a shorter month). */
export function shift(t: Naive, unit: 'month' | 'day' | 'hour', n: number): Naive {
  const d = new Date(t);
  if (unit === 'hour') return t + n * 3600_000;
  if (unit === 'day') return t + n * 86400_000;
  const months = d.getUTCFullYear() * 12 + d.getUTCMonth() + n;
  const y = Math.floor(months / 12);
  const m0 = months % 12;
  const day = Math.min(d.getUTCDate(), daysIn(y, m0));
  return Date.UTC(y, m0, day, d.getUTCHours(), d.getUTCMinutes(), d.getUTCSeconds());
}

const pad = (n: number, w = 2) => String(n).padStart(w, '0');
export type Grain = 'year' | 'quarter' | 'month' | 'week' | 'day' | 'hour';

export function periodKey(t: Naive, grain: Grain): string {
  const d = new Date(t);
  const y = d.getUTCFullYear();
  const m = d.getUTCMonth() + 1;
  switch (grain) {
    case 'year':
      return String(y);
    case 'quarter':
      return `${y}-Q${Math.ceil(m / 3)}`;
    case 'month':
      return `${y}-${pad(m)}`;
    case 'day':
      return `${y}-${pad(m)}-${pad(d.getUTCDate())}`;
    case 'hour':
      return `${y}-${pad(m)}-${pad(d.getUTCDate())}T${pad(d.getUTCHours())}`;
    case 'week': {
      // ISO week: the week's Thursday decides its year.
      const dow = (d.getUTCDay() + 6) % 7;
      const thursday = new Date(Date.UTC(y, d.getUTCMonth(), d.getUTCDate() - dow + 3));
      const wy = thursday.getUTCFullYear();
      const week = 1 + Math.floor((thursday.getTime() - Date.UTC(wy, 0, 1)) / (7 * 86400_000));
      return `${wy}-W${pad(week)}`;
    }
  }
}

export type Measure = 'sum' | 'count' | 'distinct' | 'median' | 'average';

export function aggregate(recs: readonly TimedRec[], m: Measure): number | null {
  if (m === 'count') return recs.length;
  if (m === 'distinct') return new Set(recs.map((r) => r.user)).size;
  if (recs.length === 0) return null;
  if (m === 'sum') return recs.reduce((s, r) => s + r.delay, 0);
  if (m === 'average') return recs.reduce((s, r) => s + r.delay, 0) / recs.length;
  const v = recs.map((r) => r.delay).sort((a, b) => a - b);
  const mid = (v.length - 1) / 2;
  return (v[Math.floor(mid)] + v[Math.ceil(mid)]) / 2;
}

export function comparedValue(
  as: 'value' | 'difference' | 'percentDifference',
  m: Measure,
  current: number | null,
  previous: number | null,
): number | null {
  // A period without records counts none and has no other measure, on either side.
  const before = previous ?? (m === 'count' || m === 'distinct' ? 0 : null);
  const now = current ?? (m === 'count' || m === 'distinct' ? 0 : null);
  if (as === 'value') return before;
  if (now === null || before === null) return null;
  if (as === 'difference') return now - before;
  return before === 0 ? null : ((now - before) / Math.abs(before)) * 100;
}

/**
 * A table cell's values from its records and its compared period's: a cell no record falls in is empty
 * unless its compared period has records, and then only its compared totals have values.
 */
export function cellValues(
  cur: readonly TimedRec[],
  prev: readonly TimedRec[],
  totals: ReadonlyArray<{ m: Measure; as?: 'value' | 'difference' | 'percentDifference' }>,
): Array<number | null> {
  if (cur.length === 0 && (prev.length === 0 || !totals.some((t) => t.as))) return totals.map(() => null);
  return totals.map((t) => {
    const now = cur.length ? aggregate(cur, t.m) : null;
    return t.as ? comparedValue(t.as, t.m, now, prev.length ? aggregate(prev, t.m) : null) : now;
  });
}

/**
 * The records as a comparison sees them: each with its local time and its shifted local time, the shifted
 * ones cut at the last record's local time; and the last period's key and whether it is partial.
 */
export function comparison(
  recs: readonly TimedRec[],
  opts: { timeZone: string; grain: Grain; unit: 'month' | 'day' | 'hour'; n: number },
): {
  local: Array<{ r: TimedRec; t: Naive }>;
  shifted: Array<{ r: TimedRec; t: Naive }>;
  lastKey: string;
  partial: boolean;
} {
  const local = recs.map((r) => ({ r, t: localNaive(r.date, opts.timeZone) }));
  const last = Math.max(...local.map((x) => x.t));
  // Hours move in elapsed time: the record's instant an hour later, read on the wall clock (across a DST
  // change that is not the wall clock's next hour); days to years move on the wall clock.
  const moved = (x: { r: TimedRec; t: Naive }) =>
    opts.unit === 'hour'
      ? localNaive(new Date(Date.parse(`${x.r.date}Z`) + opts.n * 3600_000).toISOString().slice(0, 19), opts.timeZone)
      : shift(x.t, opts.unit, opts.n);
  const all = local.map((x) => ({ r: x.r, t: moved(x) }));
  const lastKey = periodKey(last, opts.grain);
  const partial = all.some((x) => x.t > last && periodKey(x.t, opts.grain) === lastKey);
  return { local, shifted: all.filter((x) => x.t <= last), lastKey, partial };
}
