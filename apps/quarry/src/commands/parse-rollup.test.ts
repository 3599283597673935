import type { IndexEntry } from '@quarry/metadata-store';
import { describeRollup, MAX_ROLLUP_FIELDS, MAX_ROLLUPS, parseRollup } from './parse-rollup';

const entry: IndexEntry = {
  name: 'flights',
  description: '',
  fields: [
    { name: 'origin', type: 'string' },
    { name: 'dest', type: 'string' },
    { name: 'day', type: 'date' },
    { name: 'delay', type: 'integer' },
    { name: 'dist', type: 'number' },
    ...Array.from({ length: 10 }, (_, i) => ({ name: `t${i}`, type: 'string' })),
  ],
  views: [],
  recordCount: 1,
  version: 1,
  snapshot: 'x',
  updatedAt: '',
};

describe('quarry index rollup add options', () => {
  it('reads rows, columns with a grain and totals, and lists them back as written', () => {
    const r = parseRollup(entry, {
      rows: 'origin,dest',
      columns: 'day:month',
      totals: 'count,sum:delay,countDistinct:dest,min:dist,max:dist,average:delay,sum:delay',
    });
    expect(r).toEqual({
      name: 'origin_dest_by_day_month',
      rows: ['origin', 'dest'],
      columns: [{ field: 'day', grain: 'month' }],
      totals: [
        { kind: 'count' },
        { kind: 'sum', field: 'delay' },
        { kind: 'countDistinct', field: 'dest' },
        { kind: 'min', field: 'dist' },
        { kind: 'max', field: 'dist' },
        { kind: 'average', field: 'delay' },
      ],
    });
    expect(describeRollup(r)).toBe(
      'origin_dest_by_day_month\t--rows origin,dest --columns day:month --totals count,sum:delay,countDistinct:dest,min:dist,max:dist,average:delay',
    );
  });

  it.each([
    [{ rows: '', totals: 'count' }, /--rows has an empty item/],
    [{ totals: 'count' }, /--rows names at least one field/],
    [{ rows: 'origin,,dest', totals: 'count' }, /--rows has an empty item/],
    [{ rows: 'Origin', totals: 'count' }, /--rows: index "flights" has no field "Origin"/],
    [{ rows: 'origin', columns: 'dest:month', totals: 'count' }, /"dest" is not a date/],
    [{ rows: 'origin', columns: 'day:hour', totals: 'count' }, /grain of "day" must be one of/],
    [{ rows: 'origin', columns: 'origin', totals: 'count' }, /"origin" is named twice/],
    [{ rows: 'origin' }, /--totals names at least one total/],
    [{ rows: 'origin', totals: 'count:delay' }, /count takes no field/],
    [{ rows: 'origin', totals: 'sum' }, /sum needs a field/],
    [{ rows: 'origin', totals: 'median:delay' }, /must be count or sum\|countDistinct/],
    [{ rows: 'origin', totals: 'average:origin' }, /average of "origin" needs a number field/],
    [{ rows: 'origin', totals: 'count', name: 'a b' }, /--name must be 1-64/],
    [{ rows: 'origin', totals: 'count', name: 'x'.repeat(65) }, /--name must be 1-64/],
    [{ rows: 'x'.repeat(5000), totals: 'count' }, /--rows is longer than 4096 characters/],
    [{ rows: 'origin', totals: Array(33).fill('count').join(',') }, /at most 32 totals/],
  ])('refuses %j naming the option', (opts, message) => {
    expect(() => parseRollup(entry, opts)).toThrow(message);
  });

  it('refuses more fields than a rollup groups by, a name taken and one rollup too many', () => {
    const many = Array.from({ length: MAX_ROLLUP_FIELDS + 1 }, (_, i) => `t${i}`).join(',');
    expect(() => parseRollup(entry, { rows: many, totals: 'count' })).toThrow(/at most 8 fields/);
    const taken = {
      ...entry,
      rollups: [{ name: 'r', rows: ['origin'], columns: [], totals: [{ kind: 'count' as const }] }],
    };
    expect(() => parseRollup(taken, { rows: 'dest', totals: 'count', name: 'r' })).toThrow(
      /already has a rollup named "r"/,
    );
    const full = {
      ...entry,
      rollups: Array.from({ length: MAX_ROLLUPS }, (_, i) => ({
        name: `r${i}`,
        rows: ['origin'],
        columns: [],
        totals: [],
      })),
    };
    expect(() => parseRollup(full, { rows: 'dest', totals: 'count' })).toThrow(/at most 16 rollups/);
  });
});
