import type { z } from 'zod';
import {
  FIELD_NAME_MAX,
  INDEX_NAME_MAX,
  crosstabExecuteParams,
  indexesFindParams,
  parseParams,
  MAX_PARAM_PROBLEMS,
  queriesExecuteParams,
  reportsFindParams,
  reportsMetadataParams,
  reportsScheduleParams,
  reportsSchedulesParams,
  reportsUnscheduleParams,
  reportsExecuteParams,
  tokensEmbedParams,
} from './index';
import { fastestSync } from '@quarry/testkit';

/** The detail parseParams throws, or a failure if it accepted the params. */
function detailOf(schema: z.ZodType, params: Record<string, unknown>): string {
  try {
    parseParams(schema, params);
  } catch (err) {
    return (err as { detail: string }).detail;
  }
  throw new Error(`accepted ${JSON.stringify(params).slice(0, 200)}`);
}

describe('method params', () => {
  it.each([[{}], [{ index: '' }], [{ index: '   ' }], [{ index: 5 }], [{ index: null }], [{ index: ['a'] }]])(
    'says exactly "index is required" for %p',
    (params) => {
      expect(() => parseParams(queriesExecuteParams, params)).toThrow(
        expect.objectContaining({ detail: 'index is required' }),
      );
    },
  );

  it('refuses a __proto__ key (an object built from it would drop it silently), naming where it is', () => {
    // As JSON.parse gives it: an own key, not the prototype.
    const hostile = JSON.parse('{"__proto__": {"genre": ["Drama"]}}') as Record<string, unknown>;
    const guid = '00000000-0000-4000-8000-000000000000';
    expect(detailOf(tokensEmbedParams, { guid, ttlSeconds: 60, parameters: hostile })).toBe(
      'parameters.__proto__: "__proto__" is not accepted as a key',
    );
    expect(detailOf(reportsExecuteParams, { guid, parameters: hostile })).toBe(
      'parameters.__proto__: "__proto__" is not accepted as a key',
    );
    // Anywhere in any method's params, however deep.
    const nested = JSON.parse('{"index":"a","sort":[{"field":"x","__proto__":{}}]}') as Record<string, unknown>;
    expect(detailOf(queriesExecuteParams, nested)).toBe('sort[0].__proto__: "__proto__" is not accepted as a key');
    // Other names that are Object's own stay parameters like any other.
    expect(() =>
      parseParams(reportsExecuteParams, { guid, parameters: { constructor: ['x'], toString: ['y'] } }),
    ).not.toThrow();
  });

  it('names unknown parameters, quoted', () => {
    expect(detailOf(queriesExecuteParams, { index: 'a', foo: 1, bar: 2 })).toBe('Unknown parameters: "foo", "bar"');
    expect(detailOf(queriesExecuteParams, { index: 'a', saveReport: { name: 'x', colour: 'red' } })).toBe(
      'Unknown parameter in saveReport: "colour"',
    );
  });

  it('names the parameter of a wrong type or range', () => {
    expect(() => parseParams(queriesExecuteParams, { index: 'a', pageSize: 1001 })).toThrow(
      /pageSize must be an integer between 1 and 1000/,
    );
    expect(() => parseParams(queriesExecuteParams, { index: 'a', page: 1.5 })).toThrow(/page must be an integer/);
    expect(() => parseParams(queriesExecuteParams, { index: 'a', query: 'x'.repeat(10_001) })).toThrow(
      /query must be at most/,
    );
    expect(() =>
      parseParams(crosstabExecuteParams, { index: 'a', rows: [], totals: [{ aggregationType: 'Count' }] }),
    ).toThrow(/rows must name/);
    expect(() =>
      parseParams(crosstabExecuteParams, {
        index: 'a',
        rows: ['r'],
        totals: [{ aggregationType: 'Count' }],
        width: 99,
      }),
    ).toThrow(/width must be an integer between 100 and 4000/);
  });

  it('names the exact item of an array: sort[2], rows[1], totals[0]', () => {
    expect(detailOf(queriesExecuteParams, { index: 'a', sort: [{ field: 'x' }, { field: 'y' }, { field: ' ' }] })).toBe(
      'sort[2].field is required',
    );
    expect(detailOf(queriesExecuteParams, { index: 'a', sort: [{ field: 'x' }, 'y'] })).toBe(
      'sort[1] must be an object with field and direction',
    );
    expect(
      detailOf(crosstabExecuteParams, { index: 'a', rows: ['r', 7], totals: [{ aggregationType: 'Count' }] }),
    ).toBe('rows[1] must be a field name or an object with field, reverse, dateGroup, bin or order');
    expect(detailOf(crosstabExecuteParams, { index: 'a', rows: ['r'], totals: [{}] })).toBe(
      'totals[0].aggregationType is required (or give name and formula)',
    );
    expect(
      detailOf(crosstabExecuteParams, {
        index: 'a',
        rows: ['r'],
        totals: [{ aggregationType: 'Count' }],
        columns: [{ field: 'c', reverse: 'yes' }],
      }),
    ).toBe('columns[0].reverse must be a boolean');
  });

  it('validates saveReport', () => {
    expect(() => parseParams(queriesExecuteParams, { index: 'a', saveReport: { name: ' ' } })).toThrow(
      /saveReport.name is required/,
    );
    expect(() => parseParams(queriesExecuteParams, { index: 'a', saveReport: 'x' })).toThrow(
      /saveReport must be an object/,
    );
    expect(parseParams(queriesExecuteParams, { index: 'a', saveReport: { name: ' r ' } }).saveReport?.name).toBe('r');
  });

  it('accepts names up to their limits and refuses one character more', () => {
    expect(
      parseParams(queriesExecuteParams, {
        index: 'i'.repeat(INDEX_NAME_MAX),
        sort: [{ field: 'f'.repeat(FIELD_NAME_MAX) }],
      }).index,
    ).toHaveLength(INDEX_NAME_MAX);
    expect(detailOf(queriesExecuteParams, { index: 'i'.repeat(INDEX_NAME_MAX + 1) })).toBe(
      `index must be at most ${INDEX_NAME_MAX} characters`,
    );
    expect(detailOf(queriesExecuteParams, { index: 'a', sort: [{ field: 'f'.repeat(FIELD_NAME_MAX + 1) }] })).toBe(
      `sort[0].field must be at most ${FIELD_NAME_MAX} characters`,
    );
    // Length is counted before trimming: padding cannot smuggle a long value past the cap.
    expect(detailOf(reportsMetadataParams, { guid: `${' '.repeat(1000)}00000000-0000-4000-8000-000000000000` })).toBe(
      'guid must be at most 100 characters',
    );
  });

  describe('hostile sizes', () => {
    it('answers 40,000 unknown keys with a detail under 1 KB naming ten of them and counting the rest', () => {
      const params: Record<string, unknown> = { index: 'movies' };
      for (let i = 0; i < 40_000; i++) params[`key${i}`] = i;
      const { value: detail, ms } = fastestSync(500, () => detailOf(queriesExecuteParams, params));
      expect(Buffer.byteLength(detail)).toBeLessThan(1024);
      expect(detail).toBe(
        `Unknown parameters: ${Array.from({ length: 10 }, (_, i) => `"key${i}"`).join(', ')} and 39990 more`,
      );
      expect(ms).toBeLessThan(500);
    });

    it('cuts a 900 KB unknown key to 100 characters', () => {
      const key = `k${'y'.repeat(900_000)}`;
      const detail = detailOf(queriesExecuteParams, { index: 'movies', [key]: 1 });
      expect(detail).toBe(`Unknown parameter: "k${'y'.repeat(99)}…" (900001 characters)`);
    });

    // Every string parameter of every method, found by walking the schemas, so a new one without a cap fails here.
    const valid: Record<string, [z.ZodType, Record<string, unknown>]> = {
      'QUERIES.EXECUTE': [
        queriesExecuteParams,
        {
          index: 'movies',
          query: '*',
          sort: [{ field: 'a', direction: 'asc' }],
          saveReport: {
            name: 'r',
            description: 'd',
            folder: 'f',
            parameters: [{ name: 'p', field: 'f', kind: 'values', default: ['v'] }],
          },
        },
      ],
      'INDEXES.FIND': [indexesFindParams, { searchText: 's', cursor: 'c' }],
      'CROSSTAB.EXECUTE': [
        crosstabExecuteParams,
        {
          index: 'movies',
          query: '*',
          rows: ['r'],
          columns: [{ field: 'c' }],
          totals: [
            {
              aggregationType: 'Count',
              field: 'f',
              dynamicView: 'v',
              name: 'n',
              format: { style: 'unit', unit: 'meter' },
              highlight: [{ when: { op: '>', value: 1 }, color: '#ffffff' }],
              colorScale: { from: '#ffffff', to: '#000000' },
            },
          ],
          chartType: 'Pie2D',
          saveReport: {
            name: 'r',
            description: 'd',
            folder: 'f',
            parameters: [{ name: 'p', field: 'f', kind: 'values', default: ['v'] }],
          },
        },
      ],
      'REPORTS.FIND': [reportsFindParams, { search: 's', types: ['query'], cursor: 'c' }],
      'REPORTS.METADATA': [reportsMetadataParams, { guid: '00000000-0000-4000-8000-000000000000' }],
      'REPORTS.SCHEDULE': [
        reportsScheduleParams,
        {
          guid: 'g',
          cron: '0 8 * * 1',
          timeZone: 'UTC',
          format: 'csv',
          deliver: { webhook: { url: 'https://h.example/x' } },
        },
      ],
      'REPORTS.SCHEDULES': [reportsSchedulesParams, { guid: 'g' }],
      'REPORTS.UNSCHEDULE': [reportsUnscheduleParams, { scheduleId: 's' }],
    };

    function stringPaths(schema: z.ZodType, path: Array<string | number> = []): Array<Array<string | number>> {
      const def = (
        schema as unknown as {
          def: {
            type: string;
            innerType?: z.ZodType;
            element?: z.ZodType;
            shape?: Record<string, z.ZodType>;
            options?: z.ZodType[];
          };
        }
      ).def;
      if (def.type === 'string') return [path];
      if (def.type === 'optional') return stringPaths(def.innerType!, path);
      // A row is a field name or an axis object: the valid calls below send names.
      if (def.type === 'union') return stringPaths(def.options![0], path);
      if (def.type === 'array') return stringPaths(def.element!, [...path, 0]);
      if (def.type === 'object') return Object.entries(def.shape!).flatMap(([k, v]) => stringPaths(v, [...path, k]));
      return [];
    }

    function withValue(
      base: Record<string, unknown>,
      path: Array<string | number>,
      value: string,
    ): Record<string, unknown> {
      const copy = structuredClone(base);
      let at: Record<string | number, unknown> = copy;
      // A path into an optional object the base leaves out (deliver.email beside deliver.webhook) is made.
      path.slice(0, -1).forEach((k, i) => {
        at[k] ??= typeof path[i + 1] === 'number' ? [] : {};
        at = at[k] as Record<string | number, unknown>;
      });
      at[path[path.length - 1]] = value;
      return copy;
    }

    const cases = Object.entries(valid).flatMap(([method, [schema, base]]) =>
      stringPaths(schema).map((path) => ({
        method,
        schema,
        base,
        path,
        name: path.reduce<string>((n, k) => (typeof k === 'number' ? `${n}[${k}]` : n ? `${n}.${k}` : k), ''),
      })),
    );

    const PARAMETER_STRINGS = [
      'saveReport.parameters[0].name',
      'saveReport.parameters[0].field',
      'saveReport.parameters[0].default[0]',
    ];

    it('finds every string parameter (the walk itself works)', () => {
      expect(cases.map((c) => `${c.method} ${c.name}`)).toEqual([
        ...[
          'index',
          'query',
          'sort[0].field',
          'sort[0].direction',
          'highlight.fields[0]',
          'facets[0].field',
          'saveReport.name',
          'saveReport.description',
          'saveReport.folder',
          ...PARAMETER_STRINGS,
        ].map((n) => `QUERIES.EXECUTE ${n}`),
        'INDEXES.FIND searchText',
        'INDEXES.FIND cursor',
        ...[
          'index',
          'query',
          'rows[0]',
          'columns[0].field',
          'columns[0].order[0]',
          'totals[0].aggregationType',
          'totals[0].field',
          'totals[0].dynamicView',
          'totals[0].name',
          'totals[0].formula',
          'totals[0].format.currency',
          'totals[0].format.unit',
          'totals[0].highlight[0].color',
          'totals[0].colorScale.from',
          'totals[0].colorScale.to',
          'timeZone',
          'chartType',
          'imageFormat',
        ]
          .concat(['saveReport.name', 'saveReport.description', 'saveReport.folder', ...PARAMETER_STRINGS])
          .map((n) => `CROSSTAB.EXECUTE ${n}`),
        'REPORTS.FIND search',
        'REPORTS.FIND types[0]',
        'REPORTS.FIND cursor',
        'REPORTS.METADATA guid',
        'REPORTS.SCHEDULE guid',
        'REPORTS.SCHEDULE cron',
        'REPORTS.SCHEDULE timeZone',
        'REPORTS.SCHEDULE deliver.webhook.url',
        'REPORTS.SCHEDULE deliver.email.to[0]',
        'REPORTS.SCHEDULES guid',
        'REPORTS.UNSCHEDULE scheduleId',
      ]);
      for (const [schema, base] of Object.values(valid)) expect(() => parseParams(schema, base)).not.toThrow();
    });

    const huge = 'x'.repeat(900 * 1024);

    it.each(cases.map((c) => [`${c.method} ${c.name}`, c] as const))(
      'refuses a 900 KB %s fast, naming it and quoting none of it',
      (_, c) => {
        const params = withValue(c.base, c.path, huge);
        const { value: detail, ms } = fastestSync(100, () => detailOf(c.schema, params));
        expect(detail.startsWith(`${c.name} must `)).toBe(true);
        expect(detail.length).toBeLessThan(200);
        expect(detail).not.toContain('xxxxxxxxxx');
        expect(ms).toBeLessThan(100);
      },
    );
  });

  it('names every problem of a request, then says how many more past the first 20', () => {
    const sort = (n: number) => Array.from({ length: n }, (_, i) => ({ field: `f${i}`, direction: 'sideways' }));
    const seven = detailOf(queriesExecuteParams, { index: 'a', sort: sort(7) }).split('; ');
    expect(seven).toHaveLength(7);
    seven.forEach((problem, i) => expect(problem).toContain(`sort[${i}].direction`));
    const many = detailOf(queriesExecuteParams, {
      index: 'a',
      sort: sort(16),
      page: 0,
      pageSize: 0,
      query: 5,
      cache: 'x',
      foo: 1,
    }).split('; ');
    expect(many).toHaveLength(MAX_PARAM_PROBLEMS + 1);
    expect(many.at(-1)).toBe('and 1 more problem');
  });
});

describe('sort direction, as the query service reads it', () => {
  it.each(['asc', 'DESC', ' desc ', 'Asc\n', ''])('accepts %p (blank means ascending)', (direction) => {
    expect(() => parseParams(queriesExecuteParams, { index: 'a', sort: [{ field: 'x', direction }] })).not.toThrow();
  });
  it.each(['up', 'ascending', 'a sc'])('refuses %p naming the allowed words', (direction) => {
    expect(() => parseParams(queriesExecuteParams, { index: 'a', sort: [{ field: 'x', direction }] })).toThrow(
      /sort\[0\]\.direction must be "asc" or "desc", got/,
    );
  });
});

describe('text that is not valid Unicode', () => {
  it('refuses an unpaired surrogate in any string, naming the parameter, the unit and where it is', () => {
    expect(detailOf(queriesExecuteParams, { index: 'movies', query: 'Title:>\ud800' })).toBe(
      'query is not valid Unicode: it holds an unpaired surrogate (\\uD800) at character 8',
    );
    expect(
      detailOf(queriesExecuteParams, {
        index: 'movies',
        sort: [{ field: 'a', direction: 'asc' }, { field: 'x\udc01' }],
      }),
    ).toBe('sort[1].field is not valid Unicode: it holds an unpaired surrogate (\\uDC01) at character 2');
    expect(
      detailOf(crosstabExecuteParams, {
        index: 'm',
        rows: ['r'],
        totals: [{ aggregationType: 'Count' }],
        saveReport: { name: 'n\ud83d' },
      }),
    ).toMatch(/^saveReport\.name is not valid Unicode/);
    // The low half first, then the high one: two unpaired units, not a pair.
    expect(detailOf(reportsFindParams, { search: '\udcb3\ud835' })).toMatch(
      /^search is not valid Unicode: .*\(\\uDCB3\) at character 1$/,
    );
  });

  it('accepts characters beyond the BMP, written as a pair', () => {
    expect(parseParams(queriesExecuteParams, { index: 'movies', query: '𝒳 \ud835\udcb3' }).query).toBe('𝒳 𝒳');
  });
});
