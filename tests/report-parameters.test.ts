import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createIdentity, startStackWithData, type Stack } from './support/stack';
import type { Identity } from './support/identities';

/*
 * Report parameters end to end (docs/api.md REPORTS.EXECUTE): declared with saveReport and REPORTS.UPDATE,
 * given by name at run time, locked in embed tokens. Every count is checked against plain JS over the very
 * records loaded, and every value that looks like query syntax must match only its literal.
 */

interface Rec {
  label: string;
  n: number;
  amount: number;
  day: string;
  flag: boolean;
}

/** Texts that would be syntax if a value were ever read as a query; each holds a known number of records. */
const HOSTILE = [
  'a OR b',
  '*',
  'x" OR "y',
  "it's",
  '(a) AND (b)',
  'back\\slash\\',
  '\\',
  'label:plain',
  'n:1',
  'NOT plain',
  ' plain ',
  'plain',
  'Plain',
  'a:=b',
  '[1 TO 9]',
  '-plain',
  'label:* OR *:*',
];

function makeRecords(): Rec[] {
  const out: Rec[] = [];
  HOSTILE.forEach((label, i) => {
    // A distinct count per label (i + 1), numbers, a day in Jan-Mar 2024 and a flag varying within it.
    for (let k = 0; k <= i; k++)
      out.push({
        label,
        n: (i * 7 + k) % 13,
        amount: Math.round((i * 3.25 + k * 1.5) * 100) / 100,
        day: `2024-0${1 + ((i + k) % 3)}-${String(1 + ((i * 5 + k) % 28)).padStart(2, '0')}`,
        flag: (i + k) % 2 === 0,
      });
  });
  return out;
}

const records = makeRecords();
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-params-'));
const FILE = path.join(work, 'hostile.jsonl');

let stack: Stack;
let analyst: Identity;
let other: Identity;

beforeAll(async () => {
  fs.writeFileSync(FILE, records.map((r) => JSON.stringify(r)).join('\n') + '\n');
  stack = await startStackWithData({
    extra: async (env) => {
      const { runCli } = await import('./support/quarry-process');
      const res = await runCli(['index', 'load', 'hostile', FILE], env);
      if (res.code !== 0) throw new Error(`index load: ${res.stderr}`);
    },
  });
  analyst = await createIdentity(stack.dataDir, 'analyst', { indexes: '*' });
  other = await createIdentity(stack.dataDir, 'other', { indexes: '*' });
}, 180_000);

afterAll(async () => {
  await stack?.quarry.stop();
  fs.rmSync(work, { recursive: true, force: true });
});

const call = <T>(method: string, params: unknown, who: Identity = analyst): Promise<T> =>
  stack.data<T>(who, method, params);

async function refusal(method: string, params: unknown, who: Identity = analyst) {
  const res = await stack.call(who, method, params);
  expect(res.error).toBeDefined();
  return { code: res.error!.code, detail: res.error!.data.detail };
}

const PARAMETERS = [
  { name: 'label', field: 'label', kind: 'values' },
  { name: 'n', field: 'n', kind: 'range' },
  { name: 'amounts', field: 'amount', kind: 'values' },
  { name: 'day', field: 'day', kind: 'range' },
  { name: 'days', field: 'day', kind: 'values' },
  { name: 'flag', field: 'flag', kind: 'values' },
];

async function saveSearch(name: string, parameters: unknown = PARAMETERS, query = '*'): Promise<string> {
  const saved = await call<{ report: { guid: string } }>('QUERIES.EXECUTE', {
    index: 'hostile',
    query,
    pageSize: 1,
    saveReport: { name, parameters },
  });
  return saved.report.guid;
}

const run = (guid: string, parameters?: unknown, who: Identity = analyst) =>
  call<{ total: number; query: string }>('REPORTS.EXECUTE', { guid, ...(parameters ? { parameters } : {}) }, who);

const count = (pred: (r: Rec) => boolean) => records.filter(pred).length;

describe('declaring parameters', () => {
  it('shows them in REPORTS.METADATA with the field type, apart from the executable params', async () => {
    const guid = await saveSearch('declared');
    const meta = await call<{ params: Record<string, unknown>; parameters: unknown[] }>('REPORTS.METADATA', { guid });
    expect(meta.params).not.toHaveProperty('parameters');
    expect(meta.parameters).toEqual([
      { name: 'label', field: 'label', fieldType: 'string', kind: 'values', required: false },
      { name: 'n', field: 'n', fieldType: 'integer', kind: 'range', required: false },
      { name: 'amounts', field: 'amount', fieldType: 'number', kind: 'values', required: false },
      { name: 'day', field: 'day', fieldType: 'date', kind: 'range', required: false },
      { name: 'days', field: 'day', fieldType: 'date', kind: 'values', required: false },
      { name: 'flag', field: 'flag', fieldType: 'boolean', kind: 'values', required: false },
    ]);
    // The params shown run the report's method as they are (no parameters key to refuse).
    const again = await call<{ total: number }>('QUERIES.EXECUTE', meta.params);
    expect(again.total).toBe(records.length);
  });

  it.each([
    [
      'an unknown field',
      [{ name: 'x', field: 'nope', kind: 'values' }],
      /saveReport\.parameters\[0\]\.field: the index has no field "nope"/,
    ],
    [
      'a name twice',
      [
        { name: 'x', field: 'n', kind: 'values' },
        { name: 'X', field: 'label', kind: 'values' },
      ],
      /saveReport\.parameters\[1\]\.name "X" is declared twice/,
    ],
    [
      'a range on text',
      [{ name: 'x', field: 'label', kind: 'range' }],
      /parameters\[0\]\.kind: a range needs a number or date field/,
    ],
    [
      'a bad name',
      [{ name: '1 x', field: 'n', kind: 'values' }],
      /saveReport\.parameters\[0\]\.name must start with a letter/,
    ],
    ['an unknown kind', [{ name: 'x', field: 'n', kind: 'list' }], /saveReport\.parameters\[0\]\.kind must be one of/],
    [
      'required and a default',
      [{ name: 'x', field: 'n', kind: 'values', required: true, default: [1] }],
      /saveReport\.parameters\[0\]\.required: give required or default, not both/,
    ],
    [
      'a default of the wrong type',
      [{ name: 'x', field: 'n', kind: 'values', default: ['one'] }],
      /saveReport\.parameters\[0\]\.default\[0\] must be a number/,
    ],
    [
      'a range default on a values parameter',
      [{ name: 'x', field: 'n', kind: 'values', default: { from: 1 } }],
      /saveReport\.parameters\[0\]\.default must be an array of values for a values parameter/,
    ],
    [
      'seventeen parameters',
      Array.from({ length: 17 }, (_, i) => ({ name: `p${i}`, field: 'n', kind: 'values' })),
      /saveReport\.parameters may have at most 16 items/,
    ],
    [
      'a default value of 1001 characters',
      [{ name: 'x', field: 'label', kind: 'values', default: ['z'.repeat(1001)] }],
      /saveReport\.parameters\[0\]\.default\[0\] must be at most 1000 characters/,
    ],
    [
      '101 default values',
      [{ name: 'x', field: 'n', kind: 'values', default: Array.from({ length: 101 }, (_, i) => i) }],
      /saveReport\.parameters\[0\]\.default may have at most 100 values/,
    ],
    ['a string instead of a list', 'label', /saveReport\.parameters must be an array/],
  ])('refuses %s with a 400 naming it, and saves nothing', async (_what, parameters, message) => {
    const before = await call<{ reports: unknown[] }>('REPORTS.FIND', { limit: 200 });
    const r = await refusal('QUERIES.EXECUTE', {
      index: 'hostile',
      pageSize: 1,
      saveReport: { name: `refused ${_what}`, parameters },
    });
    expect(r.code).toBe(400);
    expect(r.detail).toMatch(message);
    const after = await call<{ reports: unknown[] }>('REPORTS.FIND', { limit: 200 });
    expect(after.reports).toHaveLength(before.reports.length);
  });
});

describe('running with parameters', () => {
  let guid: string;
  beforeAll(async () => {
    guid = await saveSearch('all kinds');
  });

  it.each(HOSTILE)('a text value %j matches exactly the records holding that very text', async (label) => {
    const expected = count((r) => r.label === label);
    expect(expected).toBeGreaterThan(0);
    expect((await run(guid, { label: [label] })).total).toBe(expected);
  });

  it('ORs the values of one parameter and ANDs parameters with each other and the saved query', async () => {
    const labels = ['*', 'a OR b', 'NOT plain'];
    expect((await run(guid, { label: labels })).total).toBe(count((r) => labels.includes(r.label)));
    expect((await run(guid, { label: labels, n: { from: 3, to: 9 } })).total).toBe(
      count((r) => labels.includes(r.label) && r.n >= 3 && r.n <= 9),
    );
    const narrowed = await saveSearch('narrowed', PARAMETERS, 'flag:true');
    expect((await run(narrowed, { label: labels })).total).toBe(count((r) => labels.includes(r.label) && r.flag));
  });

  it('takes numbers, dates and booleans as their field types', async () => {
    expect((await run(guid, { n: { from: 5 } })).total).toBe(count((r) => r.n >= 5));
    expect((await run(guid, { n: { to: 2 } })).total).toBe(count((r) => r.n <= 2));
    const amounts = [...new Set(records.map((r) => r.amount))].slice(3, 6);
    expect((await run(guid, { amounts })).total).toBe(count((r) => amounts.includes(r.amount)));
    // A month as a range end covers all of it; a day as a value is that day.
    expect((await run(guid, { day: { from: '2024-02', to: '2024-02' } })).total).toBe(
      count((r) => r.day.startsWith('2024-02')),
    );
    expect((await run(guid, { day: { from: '2024-01-15', to: '2024-02-10' } })).total).toBe(
      count((r) => r.day >= '2024-01-15' && r.day <= '2024-02-10'),
    );
    const someDay = records[7].day;
    expect((await run(guid, { days: [someDay] })).total).toBe(count((r) => r.day === someDay));
    expect((await run(guid, { flag: [false] })).total).toBe(count((r) => !r.flag));
  });

  it.each([
    [{ nope: ['x'] }, /parameters\.nope is not a parameter of this report; it declares "label", "n"/],
    [{ label: [1] }, /parameters\.label\[0\] must be text/],
    [{ label: [''] }, /parameters\.label\[0\] must not be empty/],
    [{ n: ['5'] }, /parameters\.n must be \{from, to\}: it is a range parameter/],
    [{ n: { from: 'five' } }, /parameters\.n\.from must be a number/],
    [{ n: { from: 1.5 } }, /parameters\.n\.from must be an integer/],
    [{ label: { from: 'a' } }, /parameters\.label must be an array of values: it is a values parameter/],
    [{ days: ['March'] }, /parameters\.days\[0\] must be a date/],
    [{ days: ['2024-02-30'] }, /parameters\.days\[0\] must be a date/],
    [{ flag: ['true'] }, /parameters\.flag\[0\] must be true or false/],
    [{ label: [] }, /parameters\.label must hold at least one value/],
    [{ n: {} }, /parameters\.n needs from or to/],
    [{ label: [{ nested: ['deep'] }] }, /^parameters\.label\[0\] must be a string, a number or a boolean$/],
    [{ n: { from: 1, to: [2] } }, /^parameters\.n\.to must be a number or a date$/],
    [{ n: { from: 1, upto: 2 } }, /parameters\.n/],
    [{ label: Array.from({ length: 101 }, () => 'a') }, /parameters\.label may have at most 100 values/],
    [{ label: ['z'.repeat(1001)] }, /parameters\.label\[0\] must be at most 1000 characters/],
    ['label', /parameters must be an object/],
  ])('refuses %j with a 400 naming the parameter', async (parameters, message) => {
    const r = await refusal('REPORTS.EXECUTE', { guid, parameters });
    expect(r.code).toBe(400);
    expect(r.detail).toMatch(message);
  });

  it('applies defaults when a parameter is not given, and a required one must be given', async () => {
    const withDefault = await saveSearch('defaults', [
      { name: 'label', field: 'label', kind: 'values', default: ['plain', '*'] },
      { name: 'n', field: 'n', kind: 'range', required: true },
    ]);
    expect(await refusal('REPORTS.EXECUTE', { guid: withDefault })).toEqual({
      code: 400,
      detail: 'parameters.n is required by this report',
    });
    expect((await run(withDefault, { n: { from: 0 } })).total).toBe(count((r) => ['plain', '*'].includes(r.label)));
    expect((await run(withDefault, { n: { from: 0 }, label: ['Plain'] })).total).toBe(
      count((r) => r.label === 'Plain'),
    );
    // Another user running the shared report gets the same parameters, with their own rights.
    await call('REPORTS.UPDATE', { guid: withDefault, shared: true });
    expect((await run(withDefault, { n: { to: 4 } }, other)).total).toBe(
      count((r) => ['plain', '*'].includes(r.label) && r.n <= 4),
    );
  });

  it('requires and defaults a parameter named like an Object method as any other', async () => {
    const guid = await saveSearch('object names', [
      { name: 'constructor', field: 'label', kind: 'values', required: true },
      { name: 'toString', field: 'n', kind: 'range', default: { from: 6 } },
    ]);
    expect(await refusal('REPORTS.EXECUTE', { guid, parameters: {} })).toEqual({
      code: 400,
      detail: 'parameters.constructor is required by this report',
    });
    expect((await run(guid, { constructor: ['plain', '*'] })).total).toBe(
      count((r) => ['plain', '*'].includes(r.label) && r.n >= 6),
    );
  });

  it('filters a crosstab report: its grand total and every row count only the matching records', async () => {
    const saved = await call<{ report: { guid: string } }>('CROSSTAB.EXECUTE', {
      index: 'hostile',
      rows: ['label'],
      totals: [{ aggregationType: 'Count' }, { aggregationType: 'Sum', field: 'amount' }],
      format: 'json',
      saveReport: { name: 'crosstab with parameters', parameters: PARAMETERS },
    });
    const labels = ['(a) AND (b)', 'label:* OR *:*', 'x" OR "y'];
    const ran = await call<{ data: { rows: Array<{ key: string[]; total: number[] }>; grandTotal: number[] } }>(
      'REPORTS.EXECUTE',
      { guid: saved.report.guid, parameters: { label: labels, n: { to: 10 } } },
    );
    const kept = records.filter((r) => labels.includes(r.label) && r.n <= 10);
    expect(ran.data.grandTotal[0]).toBe(kept.length);
    expect(ran.data.grandTotal[1]).toBeCloseTo(
      kept.reduce((s, r) => s + r.amount, 0),
      9,
    );
    expect(Object.fromEntries(ran.data.rows.map((r) => [r.key[0], r.total[0]]))).toEqual(
      Object.fromEntries(labels.map((l) => [l, kept.filter((r) => r.label === l).length]).filter(([, c]) => c !== 0)),
    );
  });
});

describe('REPORTS.UPDATE parameters', () => {
  it('replaces the declarations as a new version, keeps them across a params change, [] removes them', async () => {
    const guid = await saveSearch('updated', [{ name: 'label', field: 'label', kind: 'values' }]);
    const v2 = await call<{ version: number; parameters: Array<{ name: string }> }>('REPORTS.UPDATE', {
      guid,
      parameters: [{ name: 'flag', field: 'flag', kind: 'values', default: [true] }],
    });
    expect(v2.version).toBe(2);
    expect(v2.parameters.map((p) => p.name)).toEqual(['flag']);
    expect((await run(guid)).total).toBe(count((r) => r.flag));
    expect(await refusal('REPORTS.EXECUTE', { guid, parameters: { label: ['plain'] } })).toMatchObject({ code: 400 });
    // Version 1 still runs with its own declarations.
    const v1 = await call<{ total: number }>('REPORTS.EXECUTE', { guid, version: 1, parameters: { label: ['plain'] } });
    expect(v1.total).toBe(count((r) => r.label === 'plain'));
    const v3 = await call<{ version: number; parameters: unknown[] }>('REPORTS.UPDATE', {
      guid,
      params: { query: 'n:3' },
    });
    expect(v3.version).toBe(3);
    expect(v3.parameters).toHaveLength(1);
    expect((await run(guid)).total).toBe(count((r) => r.flag && r.n === 3));
    const v4 = await call<{ version: number; parameters: unknown[] }>('REPORTS.UPDATE', { guid, parameters: [] });
    expect(v4.parameters).toEqual([]);
    expect((await run(guid)).total).toBe(count((r) => r.n === 3));
    expect(
      await refusal('REPORTS.UPDATE', { guid, parameters: [{ name: 'x', field: 'missing', kind: 'values' }] }),
    ).toMatchObject({
      code: 400,
      detail: expect.stringMatching(/^parameters\[0\]\.field: the index has no field "missing"/),
    });
    // Another user's report answers as unknown, parameters or not.
    expect(await refusal('REPORTS.UPDATE', { guid, parameters: [] }, other)).toMatchObject({ code: 404 });
  });
});

describe('embed tokens fix parameters', () => {
  const embedded = (token: string) => ({ user: 'embed', token, tokenId: '' });

  it('runs with the fixed values, lets the others be set, and refuses a fixed one with 403', async () => {
    const guid = await saveSearch('embedded');
    const issued = await call<{ token: string }>('TOKENS.EMBED', {
      guid,
      ttlSeconds: 600,
      parameters: { label: ['a OR b', '*'] },
    });
    const bearer = embedded(issued.token);
    expect((await run(guid, undefined, bearer)).total).toBe(count((r) => ['a OR b', '*'].includes(r.label)));
    expect((await run(guid, { n: { from: 6 } }, bearer)).total).toBe(
      count((r) => ['a OR b', '*'].includes(r.label) && r.n >= 6),
    );
    // A fixed parameter is part of the grant (like the report itself): 403, not a 400 about the value.
    expect(await refusal('REPORTS.EXECUTE', { guid, parameters: { label: ['plain'] } }, bearer)).toEqual({
      code: 403,
      detail: 'parameters.label is fixed by this embed token; it may set only the others',
    });
  });

  it.each([
    [{ nope: ['x'] }, 400, /parameters\.nope is not a parameter of this report/],
    [{ n: ['x'] }, 400, /parameters\.n must be \{from, to\}/],
    [{ label: Array.from({ length: 100 }, (_, i) => `${'v'.repeat(60)}${i}`) }, 400, /at most 4096 characters as JSON/],
  ])('refuses to issue a token fixing %j', async (parameters, code, message) => {
    const guid = await saveSearch(`embed refused ${JSON.stringify(parameters).length}`);
    const r = await refusal('TOKENS.EMBED', { guid, ttlSeconds: 60, parameters });
    expect(r.code).toBe(code);
    expect(r.detail).toMatch(message);
  });

  it('refuses parameters on an index embed', async () => {
    const r = await refusal('TOKENS.EMBED', { index: 'hostile', ttlSeconds: 60, parameters: { label: ['a'] } });
    expect(r).toEqual({ code: 400, detail: "parameters goes with guid (a report's parameters)" });
  });
});
