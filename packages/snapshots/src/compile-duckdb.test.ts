import { parseQuery, type FieldDef } from '@quarry/query-language';
import { compileWhere } from './compile-duckdb';
import type { SingleWordFields } from './single-word-fields';

const fields: FieldDef[] = [
  { name: 'origin', type: 'string' },
  { name: 'carrier', type: 'string' },
  { name: 'title', type: 'string' },
  { name: 'delay', type: 'integer' },
  { name: 'distance', type: 'number' },
];
const parse = (q: string) => parseQuery(q, { fields, now: Date.now() });

// origin: few distinct codes, listed; carrier: single words, too many to list; title: several words per value.
const singleWord: SingleWordFields = new Map([
  [
    'origin',
    {
      values: new Map([
        ['sfo', ['SFO', 'sfo']],
        ['sea', ['SEA']],
        ...Array.from({ length: 20 }, (_, i) => [`s${i}`, [`S${i}`]] as [string, string[]]),
      ]),
    },
  ],
  ['carrier', {}],
]);

describe('compileWhere', () => {
  it('a word on a listed single-word field is an IN over its stored spellings, bound as parameters', () => {
    const w = compileWhere(parse('origin:Sfo'), { singleWord });
    expect(w.sql).toBe('(("origin" IN ($p1, $p2)))');
    expect(w.params).toEqual({ p1: 'SFO', p2: 'sfo' });
  });

  it('a word no value has, or a phrase of several words, can never match a single-word field', () => {
    expect(compileWhere(parse('origin:lax'), { singleWord })).toEqual({ sql: '(FALSE)', params: {} });
    expect(compileWhere(parse('origin:"sfo sea"'), { singleWord })).toEqual({ sql: '(FALSE)', params: {} });
  });

  it('a word on an unlisted single-word field is an equality on its words column', () => {
    const w = compileWhere(parse('carrier:UA'), { singleWord });
    expect(w.sql).toBe('(("__w:carrier" = $p1))');
    expect(w.params).toEqual({ p1: ' ua ' });
  });

  it('a prefix lists the few stored values it reaches, and tests the words column when they are many', () => {
    const few = compileWhere(parse('origin:se*'), { singleWord });
    expect(few.sql).toBe('(("origin" IN ($p1)))');
    expect(few.params).toEqual({ p1: 'SEA' });
    const many = compileWhere(parse('origin:s*'), { singleWord });
    expect(many.sql).toBe('(prefix("__w:origin", $p1))');
    expect(many.params).toEqual({ p1: ' s' });
    expect(compileWhere(parse('carrier:u*'), { singleWord }).sql).toBe('(prefix("__w:carrier", $p1))');
  });

  it('a field of several words per value, or no knowledge of the table, keeps the substring test', () => {
    const w = compileWhere(parse('title:"star wars"'), { singleWord });
    expect(w.sql).toBe('(contains("__w:title", $p1))');
    expect(w.params).toEqual({ p1: ' star wars ' });
    expect(compileWhere(parse('origin:sfo')).sql).toBe('(contains("__w:origin", $p1))');
  });

  it('a bare word tests each text field its own way', () => {
    const w = compileWhere(parse('sfo'), { singleWord });
    expect(w.sql).toBe('(("origin" IN ($p1, $p2)) OR ("__w:carrier" = $p3) OR contains("__w:title", $p4))');
  });

  it('leaves positive tests bare (DuckDB filters while scanning) and makes NULL false only under NOT', () => {
    const w = compileWhere(parse('origin:sfo AND NOT (carrier:ua OR title:x)'), { singleWord });
    expect(w.sql).toBe(
      '((("origin" IN ($p1, $p2))) AND (NOT coalesce(((("__w:carrier" = $p3)) OR (contains("__w:title", $p4))), FALSE)))',
    );
  });

  it('user text never reaches the SQL: words are bound', () => {
    const w = compileWhere(parse('title:"robert\'); DROP TABLE x; --"'), { singleWord });
    expect(w.sql).not.toMatch(/robert|drop/i);
    expect(Object.values(w.params)).toEqual([' robert drop table x ']);
  });

  describe('integer fields compare with whole numbers (BIGINT, no cast of the column)', () => {
    it('binds a whole bound as BIGINT', () => {
      const w = compileWhere(parse('delay:[60 TO 120]'));
      expect(w.sql).toBe('(("delay" >= CAST($p1 AS BIGINT)) AND ("delay" <= CAST($p2 AS BIGINT)))');
      expect(w.params).toEqual({ p1: 60, p2: 120 });
    });

    it.each([
      ['delay:>1.5', '>', 1],
      ['delay:>=1.5', '>=', 2],
      ['delay:<1.5', '<', 2],
      ['delay:<=1.5', '<=', 1],
      ['delay:>-1.5', '>', -2],
      ['delay:<=-1.5', '<=', -2],
    ])('%s holds for the same integers as %s %d', (query, op, bound) => {
      const w = compileWhere(parse(query));
      expect(w.sql).toBe(`("delay" ${op} CAST($p1 AS BIGINT))`);
      expect(w.params).toEqual({ p1: bound });
    });

    it('equality with a fraction never holds', () => {
      expect(compileWhere(parse('delay:1.5')).sql).toBe('FALSE');
    });

    it('a number too large to be an exact integer is compared as a double', () => {
      const w = compileWhere(parse('delay:>1e300'));
      expect(w.sql).toBe('("delay" > CAST($p1 AS DOUBLE))');
    });

    it('number fields keep double comparisons', () => {
      expect(compileWhere(parse('distance:>1.5')).sql).toBe('("distance" > CAST($p1 AS DOUBLE))');
    });
  });
});
