import { checkCron } from './cron-rules';

const now = new Date('2026-03-28T12:00:00Z');
const detail = (cron: string, tz = 'UTC', min = 300): string => {
  try {
    checkCron(cron, tz, min, now);
    return 'accepted';
  } catch (err) {
    return (err as { detail: string }).detail;
  }
};

describe('checkCron', () => {
  it('takes 5 fields, or 6 with seconds first, and gives the next run in the time zone', () => {
    expect(checkCron('0 8 * * 1', 'Europe/Paris', 300, now).toISOString()).toBe('2026-03-30T06:00:00.000Z');
    expect(checkCron('30 0 8 * * 1', 'UTC', 300, now).toISOString()).toBe('2026-03-30T08:00:30.000Z');
    expect(checkCron('*/5 * * * *', 'UTC', 300, now).toISOString()).toBe('2026-03-28T12:05:00.000Z');
  });

  it('refuses other field counts, bad fields and crons that never run, naming cron', () => {
    expect(detail('@daily')).toMatch(/^cron must have 5 fields .* got 1/);
    expect(detail('0 0 0 8 * * 1')).toMatch(/^cron must have 5 fields .* got 7/);
    expect(detail('61 * * * *')).toMatch(/^cron "61 \* \* \* \*" does not parse/);
    expect(detail('0 0 31 2 *')).toMatch(/^cron "0 0 31 2 \*" (never runs|does not parse)/);
  });

  it('refuses runs closer than the minimum across the next days, not only at the next run', () => {
    expect(detail('*/4 * * * *')).toMatch(
      /runs 240 s apart at times; .* every 300 s \(QUARRY_SCHEDULE_MIN_INTERVAL_S\)/,
    );
    // Hourly most of the day, but 08:00 and 08:01 are one minute apart.
    expect(detail('0,1 8 * * *')).toMatch(/runs 60 s apart/);
    expect(detail('*/10 * * * * *', 'UTC', 5)).toBe('accepted');
    expect(detail('*/2 * * * * *', 'UTC', 5)).toMatch(/runs 2 s apart/);
  });

  it('settles a sparse day field from the time fields, without walking months of runs', () => {
    expect(detail('*/5 * L * *', 'Europe/Paris')).toBe('accepted');
    expect(detail('*/4 * L * *', 'Europe/Paris')).toMatch(/runs 240 s apart/);
    expect(detail('0 */5 * L * *', 'Europe/Paris', 300)).toBe('accepted');
  });

  it('judges gaps in the zone asked, across a daylight-saving change', () => {
    // 02:30 does not exist on the night Paris springs forward; the run still comes once a day.
    expect(detail('30 2 * * *', 'Europe/Paris', 3600)).toBe('accepted');
  });
});
