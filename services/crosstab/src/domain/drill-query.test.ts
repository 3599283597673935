import { keyClause, zonedStart, type DrillContext } from './drill-query';
import type { AxisSpec } from './crosstab-spec';

const axis = (dateGroup: AxisSpec['dateGroup'], type: 'date' = 'date'): AxisSpec => ({
  field: { name: 'day', type },
  reverse: false,
  dateGroup,
  param: 'rows[0]',
  keyType: 'string',
  name: `day (${String(dateGroup)})`,
});
const ctx = (calendar: boolean, timeZone = 'UTC'): DrillContext => ({ timeZone, calendarDate: () => calendar });

describe('drill queries of date groups', () => {
  it('an hour of a calendar-date field is its whole day (every record of the day is keyed hour 00)', () => {
    expect(keyClause(axis('hour'), '2024-12-08T00', ctx(true))).toBe('day:[2024-12-08 TO 2024-12-09}');
  });

  it('a day and a month of a calendar-date field end at the next one', () => {
    expect(keyClause(axis('day'), '2024-12-31', ctx(true))).toBe('day:[2024-12-31 TO 2025-01-01}');
    expect(keyClause(axis('month'), '2024-02', ctx(true))).toBe('day:[2024-02-01 TO 2024-03-01}');
  });

  it('an hour of an instant stays one hour, in the crosstab zone', () => {
    expect(keyClause(axis('hour'), '2024-12-08T05', ctx(false))).toMatch(
      /^day:\[2024-12-08T05:00:00(\.000)?Z TO 2024-12-08T06:00:00(\.000)?Z}$/,
    );
  });
});

/** The wall-clock time of an instant in a zone, read here with a formatter of the test's own. */
function wallOf(ms: number, timeZone: string): number {
  const parts = new Intl.DateTimeFormat('en-GB', {
    timeZone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  }).formatToParts(new Date(ms));
  const n = (type: string) => Number(parts.find((p) => p.type === type)?.value);
  return Date.UTC(n('year'), n('month') - 1, n('day'), n('hour'), n('minute'), n('second'));
}

describe('where a wall-clock time starts in a zone (zonedStart)', () => {
  // Zones with DST gaps and repeats, half-hour and 45-minute offsets, a skipped day (Apia, 2011-12-30),
  // a 30-minute DST (Lord Howe), and local mean times to the second before 1912 (Paris, Amsterdam).
  const cases: Array<[string, number, number]> = [
    ['Europe/Paris', Date.UTC(2025, 2, 29), Date.UTC(2025, 2, 31)],
    ['Europe/Paris', Date.UTC(2025, 9, 25), Date.UTC(2025, 9, 27)],
    ['Europe/Paris', Date.UTC(1911, 2, 9), Date.UTC(1911, 2, 12)],
    ['Europe/Amsterdam', Date.UTC(1937, 5, 30), Date.UTC(1937, 6, 2)],
    ['America/New_York', Date.UTC(2025, 2, 8), Date.UTC(2025, 2, 10)],
    ['America/St_Johns', Date.UTC(2025, 10, 1), Date.UTC(2025, 10, 3)],
    ['Asia/Kathmandu', Date.UTC(1985, 11, 31), Date.UTC(1986, 0, 2)],
    ['Australia/Lord_Howe', Date.UTC(2025, 3, 5), Date.UTC(2025, 3, 7)],
    ['Pacific/Apia', Date.UTC(2011, 11, 28), Date.UTC(2012, 0, 1)],
  ];

  it.each(cases)('%s: the first instant whose wall clock is at or past each quarter hour', (zone, from, to) => {
    let checked = 0;
    for (let wall = from; wall < to; wall += 15 * 60_000) {
      const start = zonedStart(wall, zone);
      expect([zone, wall, wallOf(start, zone) >= wall]).toEqual([zone, wall, true]);
      expect([zone, wall, wallOf(start - 1000, zone) < wall]).toEqual([zone, wall, true]);
      checked++;
    }
    expect(checked).toBeGreaterThan(100);
  });

  it('asked again (from what it keeps per hour), the answers do not change', () => {
    const walls = Array.from({ length: 200 }, (_, i) => Date.UTC(2025, 2, 29) + i * 17 * 60_000);
    const first = walls.map((w) => zonedStart(w, 'Europe/Paris'));
    expect(walls.map((w) => zonedStart(w, 'Europe/Paris'))).toEqual(first);
  });
});
