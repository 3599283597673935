import { MAX_DATE_MS, MIN_DATE_MS, parseDateValue } from './date-values';
import { fastestSync } from '@quarry/testkit';

const NOW = Date.UTC(2024, 4, 15, 12, 30);
const iso = (ms: number) => new Date(ms).toISOString();

describe('parseDateValue', () => {
  it('holds exactly years 1 to 9999', () => {
    expect(iso(MIN_DATE_MS)).toBe('0001-01-01T00:00:00.000Z');
    expect(iso(MAX_DATE_MS)).toBe('+010000-01-01T00:00:00.000Z');
    expect(parseDateValue('0001-01-01', NOW)).toEqual({
      start: MIN_DATE_MS,
      end: MIN_DATE_MS + 86_400_000,
      precision: 'day',
    });
    expect(parseDateValue('9999', NOW)).toMatchObject({ end: MAX_DATE_MS, precision: 'year' });
    expect(parseDateValue('9999-12-31T23:59:59.999', NOW)).toMatchObject({ end: MAX_DATE_MS, precision: 'instant' });
    expect(parseDateValue('0000', NOW)).toBe('out-of-range');
    expect(parseDateValue('0000-12-31', NOW)).toBe('out-of-range');
  });

  it('reads years below 100 as themselves, not as 1900-1999 (Date.UTC would)', () => {
    const d = parseDateValue('0050-06-01', NOW);
    expect(d !== null && d !== 'out-of-range' && iso(d.start)).toBe('0050-06-01T00:00:00.000Z');
    const y = parseDateValue('0099', NOW);
    expect(y !== null && y !== 'out-of-range' && [iso(y.start), iso(y.end)]).toEqual([
      '0099-01-01T00:00:00.000Z',
      '0100-01-01T00:00:00.000Z',
    ]);
  });

  it.each(
    [
      'NOW-99999999999YEARS',
      'NOW+9999999999999999999999DAYS',
      'TODAY+8000YEARS',
      'NOW-2024YEARS',
      'FIRST_DAY_OF_YEAR-99999999MONTHS',
      `NOW+${'9'.repeat(400)}DAYS`,
      // Out and back: with offsets this large the arithmetic is no longer exact, so it is refused on the way.
      'NOW+100000000000DAYS-100000000000DAYS',
      'NOW+300000YEARS-300000YEARS',
    ].map((t) => [t.length > 40 ? `${t.slice(0, 30)}…` : t, t]),
  )('refuses %s as outside the supported range', (_label, token) => {
    expect(parseDateValue(token, NOW)).toBe('out-of-range');
  });

  it('still reads what lies inside', () => {
    const instant = parseDateValue('NOW-2023YEARS', NOW);
    expect(instant !== null && instant !== 'out-of-range' && iso(instant.start)).toBe('0001-05-15T12:30:00.000Z');
    const past = parseDateValue('TODAY-2023YEARS', NOW);
    expect(past !== null && past !== 'out-of-range' && iso(past.start)).toBe('0001-05-15T00:00:00.000Z');
    expect(parseDateValue('TODAY+7975YEARS', NOW)).toMatchObject({ precision: 'day' });
    expect(parseDateValue('TODAY+7976YEARS', NOW)).toBe('out-of-range');
  });

  it('still answers null for what is no date at all', () => {
    expect(parseDateValue('yesterdayish', NOW)).toBeNull();
    expect(parseDateValue('99999', NOW)).toBeNull();
    expect(parseDateValue('2001-02-30', NOW)).toBeNull();
  });

  it('stays fast on long hostile tokens', () => {
    const { ms } = fastestSync(50, () => {
      expect(parseDateValue('NOW+' + '1'.repeat(10_000) + 'X', NOW)).toBeNull();
      expect(parseDateValue('NOW' + '+1DAY'.repeat(2000), NOW)).toMatchObject({ precision: 'instant' });
      expect(parseDateValue('2001-' + '1'.repeat(10_000), NOW)).toBeNull();
    });
    expect(ms).toBeLessThan(50);
  });
});
