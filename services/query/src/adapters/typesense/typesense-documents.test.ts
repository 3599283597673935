import { collectionFields, documentLine } from './typesense-documents';
import { doubleKey, KEY_MIN } from './typesense-encoding';
import { slotsOf } from './typesense-filter';

const slots = [
  ...slotsOf([
    { name: 'title', type: 'string' },
    { name: 'big', type: 'integer' },
    { name: 'ratio', type: 'number' },
    { name: 'when', type: 'date' },
    { name: 'flag', type: 'boolean' },
    { name: 'note', type: 'string' },
  ]).values(),
];

describe('Typesense collection fields', () => {
  it('store every number, date and boolean as a sortable int64 key: no 32-bit float, no unsortable bool', () => {
    const fields = collectionFields(slots);
    expect(fields.filter((f) => /^[kr]\d+$/.test(String(f.name)))).toEqual(
      ['r0', 'k1', 'k2', 'k3', 'k4', 'r5'].map((name) => ({
        name,
        type: 'int64',
        sort: true,
        optional: true,
        // Numbers, integers and booleans are counted on their keys, which decode exactly.
        ...(['k1', 'k2', 'k4'].includes(name) ? { facet: true } : {}),
      })),
    );
    expect(fields.map((f) => f.type)).not.toContain('float');
    expect(fields.map((f) => f.type)).not.toContain('bool');
    expect(fields.find((f) => f.name === '__json')).toEqual({
      name: '__json',
      type: 'string',
      index: false,
      optional: true,
    });
  });

  it('have no text arrays for an index without text fields', () => {
    expect(collectionFields([...slotsOf([{ name: 'n', type: 'integer' }]).values()]).map((f) => f.name)).toEqual([
      '__rowid',
      '__json',
      '__has',
      '__q',
      'k0',
    ]);
  });

  it('give text its words in order for the ranked q, and text and dates a string facet of their own', () => {
    const fields = collectionFields(slots);
    expect(fields.filter((f) => /^[tf]\d+$/.test(String(f.name)))).toEqual([
      { name: 't0', type: 'string', optional: true },
      { name: 'f0', type: 'string', facet: true, optional: true },
      { name: 'f3', type: 'string', facet: true, optional: true },
      { name: 't5', type: 'string', optional: true },
      { name: 'f5', type: 'string', facet: true, optional: true },
    ]);
    // Every document holds `__q`, so it is no optional field.
    expect(fields.find((f) => f.name === '__q')).toEqual({ name: '__q', type: 'string' });
  });
});

describe('Typesense documents', () => {
  const line = (values: unknown[], ranks: Array<number | null> = [1, null, null, null, null, 2]) =>
    documentLine({ rowid: 7, values, ranks, json: '{"title":"x"}' }, slots);

  it('write int64 keys with their exact digits, beyond 2^53 and at the int64 ends', () => {
    const text = line(['Ab', 9007199254740993n, 1e300, 1577836800000500n, true, null]);
    expect(text).toContain('"k1":9007199254740993');
    expect(text).toContain(`"k2":${doubleKey(1e300)}`);
    expect(text).toContain('"k3":1577836800000500');
    expect(text).toContain('"k4":1');
    expect(line([null, -(2n ** 63n), -0, 0n, false, null])).toContain(`"k1":${KEY_MIN},"k2":0,"k3":0,"k4":0`);
  });

  it('are valid JSON carrying the record, its order and the tokens of its words', () => {
    const doc = JSON.parse(line(['New York, new YORK!', null, null, null, null, 'café au lait'])) as Record<
      string,
      unknown
    >;
    expect(doc).toEqual({
      id: '7',
      __rowid: 7,
      __json: '{"title":"x"}',
      __q: 'z7',
      __has: ['0z8', '5z8'],
      __w: ['0z8new', '0z8york', '5z8cafz2e9', '5z8au', '5z8lait'],
      __b: ['0z8newz0york', '0z8yorkz0new', '5z8cafz2e9z0au', '5z8auz0lait'],
      __r: ['0z8newz0yorkz0newz0york', '0z8yorkz0newz0york', '5z8cafz2e9z0auz0lait'],
      __p: [
        '0z8n',
        '0z8ne',
        '0z8new',
        '0z8y',
        '0z8yo',
        '0z8yor',
        '5z8c',
        '5z8ca',
        '5z8caf',
        '5z8a',
        '5z8au',
        '5z8l',
        '5z8la',
        '5z8lai',
      ],
      r0: 1,
      t0: 'new york new york',
      f0: 'vNew York, new YORK!',
      r5: 2,
      t5: 'cafz2e9 au lait',
      f5: 'vcafé au lait',
    });
  });

  it('give a date its facet text as the snapshot renders it, and blank text no facet value', () => {
    const doc = JSON.parse(
      documentLine(
        {
          rowid: 1,
          values: ['', null, null, 1577836800000500n, null, null],
          ranks: [1, null, null, null, null, null],
          dateTexts: [null, null, null, '2020-01-01T00:00:00', null, null],
          json: '{}',
        },
        slots,
      ),
    ) as Record<string, unknown>;
    expect(doc.f3).toBe('2020-01-01T00:00:00');
    expect(doc.k3).toBe(1577836800000500);
    expect(doc.f0).toBeUndefined();
    expect(doc.t0).toBeUndefined();
  });

  it('count an empty text as missing for `field:*` but keep its rank (it sorts first, as in the engine)', () => {
    const doc = JSON.parse(line(['', null, null, null, null, null], [1, null, null, null, null, null])) as Record<
      string,
      unknown
    >;
    expect(doc.__has).toBeUndefined();
    expect(doc.r0).toBe(1);
    expect(doc.__w).toBeUndefined();
  });
});
