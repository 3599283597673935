import { keyClause, type DrillContext } from './drill-query';
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
