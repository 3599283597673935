import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { parse } from 'csv-parse/sync';
import { buildSnapshot, type BuildRequest, type BuiltSnapshot, type LoadReport } from '../build-snapshot';

/**
 * Loading without loss: every malformed file is refused with its line, column and reason, and leaves
 * nothing behind; every value of a file of type traps reads back as written; skipped rows are listed.
 */
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-loading-'));
const dataDir = path.join(dir, 'data');

function write(name: string, content: string | Buffer): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, content);
  return file;
}

function build(file: string, extra: Partial<BuildRequest> = {}) {
  return buildSnapshot({ name: 't', file, dataDir, types: {}, views: [], ...extra });
}

async function readBack(snapshot: string): Promise<Array<Record<string, unknown>>> {
  const db = await DuckDBInstance.create(':memory:');
  const c = await db.connect();
  try {
    const sql = `SELECT * FROM read_parquet('${path.join(dataDir, snapshot).replace(/'/g, "''")}')`;
    return (await c.runAndReadAll(sql)).getRowObjectsJS() as Array<Record<string, unknown>>;
  } finally {
    c.closeSync();
    db.closeSync();
  }
}

/** What a failed load must leave: no snapshot, no temporary file, no rejects file. */
function leftovers(): string[] {
  const files: string[] = [];
  for (const sub of ['indexes/t', 'rejects']) {
    const d = path.join(dataDir, sub);
    if (fs.existsSync(d)) files.push(...fs.readdirSync(d).map((f) => `${sub}/${f}`));
  }
  return files;
}

afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
beforeEach(() => fs.rmSync(dataDir, { recursive: true, force: true }));

describe('a malformed file is refused, naming where and why, and leaves nothing behind', () => {
  const cases: Array<[string, string, string | Buffer, RegExp, Partial<BuildRequest>?]> = [
    [
      'a ragged CSV (a short row)',
      'ragged.csv',
      'x,y\n1,2\n3\n4,5,6\n',
      /^ragged\.csv:3, column "y": the row has 1 field where the header has 2\. Nothing was published/,
    ],
    [
      'a row with too many fields',
      'long.csv',
      'x,y\n1,2\n4,5,6\n',
      /^long\.csv:3: the row has 3 fields where the header has 2/,
    ],
    [
      'one short row at the end (the reload case)',
      'kv.csv',
      'k,v\nc,3\nd\n',
      /^kv\.csv:3, column "v": the row has 1 field where the header has 2/,
    ],
    [
      'an unterminated quote',
      'quote.csv',
      'a,b\n"1,2\n3,4\n',
      /^quote\.csv:2, column "a": a quoted value starts here and its closing quote never comes/,
    ],
    [
      'a truncated CSV (cut inside a quoted value)',
      'cut.csv',
      'a,b\n1,"two\n2,"thr',
      /^cut\.csv:2, column "b": a quoted value starts here and its closing quote never comes/,
    ],
    [
      'invalid UTF-8',
      'latin.csv',
      Buffer.concat([Buffer.from('a,b\n1,'), Buffer.from([0xe9, 0x74, 0xe9]), Buffer.from('\n2,3\n')]),
      /^latin\.csv:2, column "b": not valid UTF-8 \(if the file is Latin-1, load it with --encoding latin1\)/,
    ],
    [
      'an unterminated quote in the header',
      'head.csv',
      '"a,b\n1,2\n',
      /^head\.csv:1: the header cannot be read: a quote opened in it is never closed/,
    ],
    ['an empty CSV', 'empty.csv', '', /^empty\.csv is empty: a CSV file needs a header line/],
    ['a CSV of blank lines', 'blank.csv', '\n  \n', /^blank\.csv is empty/],
    [
      'a blank header name',
      'blankname.csv',
      'a,,c\n1,2,3\n',
      /^blankname\.csv:1: the header has a blank name in column 2/,
    ],
    ['a repeated header name', 'dup.csv', 'a,b,A\n1,2,3\n', /^dup\.csv:1: the header names "A" more than once/],
    [
      'a JSON array with a trailing comma',
      'comma.json',
      '[{"a":2,}]',
      /^comma\.json:1: not valid JSON \(.+\) at column 9\. Nothing was published/,
    ],
    ['NaN in JSON', 'nan.json', '[\n{"a":1},\n{"a":NaN}\n]', /^nan\.json(:3)?: not valid JSON/],
    [
      'a JSON Lines comment on line 2',
      'comment.jsonl',
      '{"a":1}\n// note\n{"a":2}\n',
      /^comment\.jsonl:2: not valid JSON/,
    ],
    [
      'a JSON Lines record that is not an object',
      'scalar.jsonl',
      '{"a":1}\n[1,2]\n',
      /^scalar\.jsonl:2: the record is an array, not an object/,
    ],
    [
      'a JSON array holding a number',
      'mixed.json',
      '[{"a":1},\n 7]',
      /^mixed\.json:2: the record is a number, not an object/,
    ],
    ['a JSON document that is a string', 'str.json', '"hello"', /^str\.json:1: the record is a string, not an object/],
    ['an empty JSON file', 'empty.json', '  ', /^empty\.json is empty/],
    ['an empty JSON Lines file', 'empty.jsonl', '', /^empty\.jsonl is empty/],
    [
      'invalid UTF-8 in JSON',
      'bad.json',
      Buffer.concat([Buffer.from('[{"a":"'), Buffer.from([0xff]), Buffer.from('"}]')]),
      /^bad\.json:1: not valid UTF-8 \(byte 8\)/,
    ],
    [
      'a value its declared type cannot read',
      'typed.csv',
      'a,b\n1,x\n2,y\n3,zz\n',
      /^typed\.csv:2, column "b": cannot read "x" as integer/,
      { types: { b: 'integer' } },
    ],
  ];
  // Every case gets its options argument: jest reads a callback with more parameters than values as one taking `done`.
  it.each(cases.map(([w, n, c, m, e]) => [w, n, c, m, e ?? {}] as const))(
    '%s',
    async (_what, name, content, message, extra) => {
      const file = write(name, content);
      await expect(build(file, extra)).rejects.toThrow(message);
      expect(leftovers()).toEqual([]);
    },
  );

  it('a JSON Lines line past 64 MiB fails naming its line, before it is held whole', async () => {
    const file = path.join(dir, 'long.jsonl');
    const fd = fs.openSync(file, 'w');
    fs.writeSync(fd, '{"a":1}\n{"b":"');
    const mib = Buffer.alloc(1_048_576, 0x78);
    for (let i = 0; i < 70; i++) fs.writeSync(fd, mib);
    fs.writeSync(fd, '"}\n');
    fs.closeSync(fd);
    await expect(build(file)).rejects.toThrow(
      'long.jsonl:2: a line longer than 64 MiB; JSON Lines hold one record a line (a JSON array is sent as application/json). Nothing was published',
    );
    fs.rmSync(file);
  });

  it('a header and no rows is a valid, empty index', async () => {
    const built = await build(write('header.csv', 'a,b\r\n'));
    expect({ records: built.recordCount, read: built.rowsRead, rejected: built.rowsRejected }).toEqual({
      records: 0,
      read: 0,
      rejected: 0,
    });
    expect(built.fields.map((f) => f.name)).toEqual(['a', 'b']);
  });
});

describe('types never change a value', () => {
  const rows = [
    ['zip', 'big', 'huge', 'mixed', 'exp', 'price', 'flag', 'when', 'spaced', 'count', 'ratio'],
    ['02134', '9007199254740993', '18446744073709551616', '1', '1e5', '1.50', 'true', '2001-03-07', ' 7', '1', '0.5'],
    ['10001', '1', '2', 'two', '2', '19.99', 'FALSE', '2001-03-08', '8', '-2', '1.25'],
    ['00000', '-9007199254740993', '3', '3', '3', '0.10', '', '', '9', '', '3'],
  ];
  const csv = rows
    .map((r) => r.map((v) => (/[",\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v)).join(','))
    .join('\r\n');

  it('keeps text where a number would change it, and reads back every value as the file holds it', async () => {
    const file = write('traps.csv', `\uFEFF${csv}\r\n`);
    const built = await build(file);
    const types = Object.fromEntries(built.fields.map((f) => [f.name, f.type]));
    expect(types).toEqual({
      zip: 'string', // leading zeros
      big: 'integer', // beyond 2^53, exact as BIGINT
      huge: 'string', // beyond BIGINT
      mixed: 'string', // words among numbers
      exp: 'string', // 1e5 written that way
      price: 'number',
      flag: 'boolean',
      when: 'date',
      spaced: 'string', // ' 7' is not 7's own spelling
      count: 'integer',
      ratio: 'number',
    });
    const back = await readBack(built.snapshot);
    const source = parse(fs.readFileSync(file, 'utf8'), { bom: true, columns: true }) as Array<Record<string, string>>;
    expect(back).toHaveLength(source.length);
    // Every value compared with the file: the text itself, or the number, boolean or day it spells.
    source.forEach((rec, i) => {
      for (const [field, text] of Object.entries(rec)) {
        const got = back[i][field];
        if (text === '') expect({ field, got }).toEqual({ field, got: null });
        else if (types[field] === 'string') expect({ field, got }).toEqual({ field, got: text });
        else if (types[field] === 'integer') expect({ field, got: String(got) }).toEqual({ field, got: text });
        else if (types[field] === 'number') expect({ field, got }).toEqual({ field, got: Number(text) });
        else if (types[field] === 'boolean')
          expect({ field, got }).toEqual({ field, got: text.toLowerCase() === 'true' });
        else expect({ field, got: (got as Date).toISOString().slice(0, 10) }).toEqual({ field, got: text });
      }
    });
  });

  it('a column that is mixed past the sample still becomes text, with no row dropped', async () => {
    const lines = ['n', ...Array.from({ length: 5000 }, (_, i) => String(i)), 'n/a', '7'];
    const built = await build(write('late.csv', lines.join('\n')));
    expect(built.fields).toEqual([{ name: 'n', type: 'string' }]);
    const back = await readBack(built.snapshot);
    expect(back.map((r) => r.n)).toEqual(lines.slice(1));
  });

  it('integers that turn decimal past the sample become numbers, not text', async () => {
    const lines = ['n', ...Array.from({ length: 3000 }, (_, i) => String(i)), '2.5'];
    const built = await build(write('late-dec.csv', lines.join('\n')));
    expect(built.fields).toEqual([{ name: 'n', type: 'number' }]);
    expect((await readBack(built.snapshot)).at(-1)).toEqual({ n: 2.5 });
  });

  it('--type and --date-format override inference', async () => {
    const built = await build(write('over.csv', 'zip,day\n02134,07/03/2001\n'), {
      types: { zip: 'integer' },
      dateFormat: '%d/%m/%Y',
    });
    expect(built.fields).toEqual([
      { name: 'zip', type: 'integer' },
      { name: 'day', type: 'date' },
    ]);
    const [row] = await readBack(built.snapshot);
    expect(String(row.zip)).toBe('2134');
    expect((row.day as Date).toISOString().slice(0, 10)).toBe('2001-03-07');
  });

  it('JSON keeps its strings as strings and big integers exact', async () => {
    const built = await build(
      write('j.jsonl', '{"zip":"02134","n":9007199254740993,"k":1}\n{"zip":"10001","n":1,"k":2}\n'),
    );
    expect(built.fields).toEqual([
      { name: 'zip', type: 'string' },
      { name: 'n', type: 'integer' },
      { name: 'k', type: 'integer' },
    ]);
    expect((await readBack(built.snapshot)).map((r) => String(r.n))).toEqual(['9007199254740993', '1']);
  });
});

/** A rejects file's entries, one JSON object per line. */
function rejectsListed(file: string): Array<{ line?: number; record?: number; text: string }> {
  return fs
    .readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { line?: number; record?: number; text: string });
}

describe('--on-error skip', () => {
  it('publishes the good rows and lists each rejected one with its line, reason and text', async () => {
    const rejectsFile = path.join(dataDir, 'rejects', 't-v1.jsonl');
    const built = await build(write('ragged.csv', 'x,y\n1,2\n3\n4,5,6\n7,8\n'), { onError: 'skip', rejectsFile });
    expect({ read: built.rowsRead, loaded: built.recordCount, rejected: built.rowsRejected }).toEqual({
      read: 4,
      loaded: 2,
      rejected: 2,
    });
    expect(built.rowsRead).toBe(built.recordCount + built.rowsRejected);
    const listed = fs
      .readFileSync(rejectsFile, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(listed).toEqual([
      { line: 3, column: 'y', reason: 'the row has 1 field where the header has 2', text: '3' },
      { line: 4, reason: 'the row has 3 fields where the header has 2', text: '4,5,6' },
    ]);
    expect((fs.statSync(rejectsFile).mode & 0o777).toString(8)).toBe('600');
  });

  it('skips JSON Lines that are not objects, keeping the others exactly as written', async () => {
    const rejectsFile = path.join(dataDir, 'rejects', 't-v1.jsonl');
    const built = await build(write('s.jsonl', '{"a":1}\nnull\n{"a":9007199254740993}\n{"a":,}\n'), {
      onError: 'skip',
      rejectsFile,
    });
    expect({ read: built.rowsRead, loaded: built.recordCount, rejected: built.rowsRejected }).toEqual({
      read: 4,
      loaded: 2,
      rejected: 2,
    });
    expect((await readBack(built.snapshot)).map((r) => String(r.a))).toEqual(['1', '9007199254740993']);
  });

  it('skips values a declared type cannot read', async () => {
    const rejectsFile = path.join(dataDir, 'rejects', 't-v1.jsonl');
    const built = await build(write('typed.csv', 'a,b\n1,2\n2,x\n3,4\n'), {
      onError: 'skip',
      rejectsFile,
      types: { b: 'integer' },
    });
    expect(built.recordCount).toBe(2);
    expect(JSON.parse(fs.readFileSync(rejectsFile, 'utf8'))).toEqual({
      line: 3,
      column: 'b',
      reason: 'cannot read "x" as integer',
      text: 'x',
    });
  });

  it('names every rejected CSV row by its line, after blank lines, multi-line values and rejected rows', async () => {
    const rejectsFile = path.join(dataDir, 'rejects', 't-v1.jsonl');
    const csv = [
      'a,b', // 1
      '1,"two', // 2: a value over three lines
      'lines',
      'more"',
      '', // 5: blank
      'x,3', // 6: a type reject
      '4,5,6', // 7: too many fields
      '"q,""r', // 8: quoted, with a line feed and an escaped quote inside
      '""s",7',
      '',
      '', // 11
      'y,8', // 12: a type reject
      '9,"', // 13: an unterminated quote takes the rest
      'z,10',
    ].join('\n');
    const built = await build(write('where.csv', csv), {
      onError: 'skip',
      rejectsFile,
      types: { a: 'integer' },
    });
    const listed = rejectsListed(rejectsFile);
    expect(listed.map((r) => [r.line, r.record, r.text.split('\n')[0]])).toEqual([
      [7, undefined, '4,5,6'],
      [13, undefined, '9,"'],
      [6, undefined, 'x'],
      [8, undefined, 'q,"r'],
      [12, undefined, 'y'],
    ]);
    expect(built.recordCount).toBe(1);
  });

  it('names a JSON Lines row a declared type cannot read by its line', async () => {
    const rejectsFile = path.join(dataDir, 'rejects', 't-v1.jsonl');
    await build(write('t.jsonl', '{"n":1}\n\n[1]\n{"n":"x"}\n  \n{"n":2}\n{"n":"y"}\n'), {
      onError: 'skip',
      rejectsFile,
      types: { n: 'integer' },
    });
    const listed = rejectsListed(rejectsFile);
    expect(listed.map((r) => [r.line, r.record])).toEqual([
      [3, undefined],
      [4, undefined],
      [7, undefined],
    ]);
  });

  it('says on which line the value that made a column text is', async () => {
    const rows = ['y', '"1', '2"', ...Array.from({ length: 20 }, (_, i) => String(2000 + i)), '02008', '2021'];
    const built = await build(write('years.csv', rows.join('\n')));
    expect(built.typeNotes).toEqual([{ column: 'y', wanted: 'integer', line: 2, value: '1\n2' }]);
  });

  it('--max-errors stops a load that rejects more, publishing nothing', async () => {
    const rejectsFile = path.join(dataDir, 'rejects', 't-v1.jsonl');
    const file = write('many.csv', 'x,y\n1\n2\n3\n4,5\n');
    await expect(build(file, { onError: 'skip', maxErrors: 2, rejectsFile })).rejects.toThrow(
      /^More than 2 rows rejected \(--max-errors 2\); the first: many\.csv:2, column "y"/,
    );
    expect(leftovers()).toEqual([]);
    const ok = await build(file, { onError: 'skip', maxErrors: 3, rejectsFile });
    expect(ok.rowsRejected).toBe(3);
  });
});

describe('other sources', () => {
  it('--encoding latin1 reads a Latin-1 file', async () => {
    const file = write(
      'l1.csv',
      Buffer.concat([Buffer.from('city,n\n'), Buffer.from([0x4d, 0xe1, 0x6c, 0x61, 0x67, 0x61]), Buffer.from(',1\n')]),
    );
    const built = await build(file, { encoding: 'latin1' });
    expect(await readBack(built.snapshot)).toEqual([{ city: 'Málaga', n: 1n }]);
  });

  it('appends to a published version: its rows first, then the file, with the published types', async () => {
    const first = await build(write('a1.csv', 'k,n\na,1\nb,2\n'));
    const second = await build(write('a2.csv', 'n,k\n3,c\n'), {
      append: { snapshot: first.snapshot, fields: first.fields },
    });
    expect(second.recordCount).toBe(3);
    expect(second.rowsRead).toBe(1);
    expect((await readBack(second.snapshot)).map((r) => [r.k, Number(r.n)])).toEqual([
      ['a', 1],
      ['b', 2],
      ['c', 3],
    ]);
    await expect(
      build(write('a3.csv', 'k,m\nd,4\n'), { append: { snapshot: first.snapshot, fields: first.fields } }),
    ).rejects.toThrow(/--append needs the fields of the published version; a3\.csv lacks "n" and has "m" it does not/);
    await expect(
      build(write('a4.csv', 'k,n\nd,x\n'), { append: { snapshot: first.snapshot, fields: first.fields } }),
    ).rejects.toThrow(/a4\.csv:2, column "n": cannot read "x" as integer/);
  });

  it('reports progress from 0 to 1 in steps, never backwards', async () => {
    const lines = ['a,b', ...Array.from({ length: 200_000 }, (_, i) => `${i},text ${i}`)];
    const seen: number[] = [];
    await build(write('big.csv', lines.join('\n')), { onProgress: (f) => seen.push(f) });
    expect(seen[0]).toBe(0);
    expect(seen.at(-1)).toBe(1);
    expect(seen.every((f, i) => i === 0 || f >= seen[i - 1])).toBe(true);
    expect(new Set(seen.map((f) => Math.floor(f * 4))).size).toBeGreaterThanOrEqual(3);
  });
});

describe('upsert by key', () => {
  const rejectsFile = () => path.join(dataDir, 'rejects', 't-v2.jsonl');
  /** A published first version, then an upsert onto it. */
  async function upsert(first: string, second: string, extra: Partial<BuildRequest> = {}) {
    const v1 = await build(write('v1.csv', first), { types: extra.types ?? {} });
    const v2 = await build(write('v2.csv', second), {
      append: { snapshot: v1.snapshot, fields: v1.fields },
      upsert: { key: 'id' },
      ...extra,
    });
    return { v1, v2, rows: await readBack(v2.snapshot) };
  }
  const pairs = (rows: Array<Record<string, unknown>>) =>
    rows.map((r) => [r.id === null ? null : String(r.id), r.name]);

  it('replaces the rows whose key the file has, after the others, and appends the new keys', async () => {
    // A previous row with no key is kept: no key of the file can match it.
    const { v2, rows } = await upsert('id,name\n1,a\n,nokey\n2,b\n3,c\n', 'id,name\n2,B\n4,d\n');
    expect(pairs(rows)).toEqual([
      ['1', 'a'],
      [null, 'nokey'],
      ['3', 'c'],
      ['2', 'B'],
      ['4', 'd'],
    ]);
    expect({ records: v2.recordCount, read: v2.rowsRead, replaced: v2.replaced, rejected: v2.rowsRejected }).toEqual({
      records: 5,
      read: 2,
      replaced: 1,
      rejected: 0,
    });
    expect(v2.rejects).toBeUndefined();
  });

  it('replaces every previous row with a key the file has, and counts them', async () => {
    const { v2, rows } = await upsert('id,name\n1,a\n1,a2\n2,b\n', 'id,name\n1,A\n2,B\n');
    expect(pairs(rows)).toEqual([
      ['1', 'A'],
      ['2', 'B'],
    ]);
    expect(v2.replaced).toBe(3);
  });

  it('keeps both sides in their order however many rows the join takes', async () => {
    const n = 60_000;
    const first = ['id,name', ...Array.from({ length: n }, (_, i) => `${i},p${i}`)].join('\n');
    // Every 997th key again, in reverse, then new ones.
    const again = Array.from({ length: n }, (_, i) => n - 1 - i).filter((i) => i % 997 === 0);
    const second = ['id,name', ...again.map((i) => `${i},u${i}`), `${n},new`].join('\n');
    const { v2, rows } = await upsert(first, second);
    const want = [
      ...Array.from({ length: n }, (_, i) => i)
        .filter((i) => i % 997 !== 0)
        .map((i) => [String(i), `p${i}`]),
      ...again.map((i) => [String(i), `u${i}`]),
      [String(n), 'new'],
    ];
    expect(pairs(rows)).toEqual(want);
    expect(v2.replaced).toBe(again.length);
  });

  it('compares keys as stored: "07" is the key 7 in an integer column, and not "7" in a text one', async () => {
    const integer = await upsert('id,name\n7,a\n8,b\n', 'id,name\n07,A\n');
    expect(integer.v1.fields[0]).toEqual({ name: 'id', type: 'integer' });
    expect(pairs(integer.rows)).toEqual([
      ['8', 'b'],
      ['7', 'A'],
    ]);
    expect(integer.v2.replaced).toBe(1);
    const text = await upsert('id,name\n7,a\n8,b\n', 'id,name\n07,A\n', { types: { id: 'string' } });
    expect(text.v1.fields[0]).toEqual({ name: 'id', type: 'string' });
    expect(pairs(text.rows)).toEqual([
      ['7', 'a'],
      ['8', 'b'],
      ['07', 'A'],
    ]);
    expect(text.v2.replaced).toBe(0);
  });

  it('refuses a row whose key is empty, naming its line; skip rejects it', async () => {
    await expect(upsert('id,name\n1,a\n', 'id,name\n2,b\n,c\n')).rejects.toThrow(
      /^v2\.csv:3, column "id": the key field "id" is empty\. Nothing was published/,
    );
    const { v2, rows } = await upsert('id,name\n1,a\n', 'id,name\n2,b\n,c\n1,A\n', {
      onError: 'skip',
      rejectsFile: rejectsFile(),
    });
    expect(pairs(rows)).toEqual([
      ['2', 'b'],
      ['1', 'A'],
    ]);
    expect({ read: v2.rowsRead, rejected: v2.rowsRejected, replaced: v2.replaced }).toEqual({
      read: 3,
      rejected: 1,
      replaced: 1,
    });
    expect(rejectsListed(rejectsFile())).toEqual([
      { line: 3, column: 'id', reason: 'the key field "id" is empty', text: '{"id":null,"name":"c"}' },
    ]);
    expect(v2.rejects).toEqual([
      { line: 3, column: 'id', reason: 'the key field "id" is empty', text: '{"id":null,"name":"c"}' },
    ]);
  });

  it('refuses a repeated key, naming both lines; skip keeps the first and rejects the repeats', async () => {
    await expect(upsert('id,name\n1,a\n', 'id,name\n7,a\n8,b\n7,c\n')).rejects.toThrow(
      /^v2\.csv:4, column "id": repeats the key id="7" of line 2\. Nothing was published/,
    );
    expect(leftovers().filter((f) => f.startsWith('rejects/'))).toEqual([]);
    const { v2, rows } = await upsert('id,name\n1,a\n7,old\n', 'id,name\n7,a\n8,b\n7,c\n\n7,d\n', {
      onError: 'skip',
      rejectsFile: rejectsFile(),
    });
    expect(pairs(rows)).toEqual([
      ['1', 'a'],
      ['7', 'a'],
      ['8', 'b'],
    ]);
    expect({ read: v2.rowsRead, rejected: v2.rowsRejected, replaced: v2.replaced }).toEqual({
      read: 4,
      rejected: 2,
      replaced: 1,
    });
    expect(rejectsListed(rejectsFile()).map((r) => [r.line, (r as { reason?: string }).reason])).toEqual([
      [4, 'repeats the key id="7" of line 2'],
      [6, 'repeats the key id="7" of line 2'],
    ]);
  });

  it('names JSON Lines rows by their line after rows other checks rejected', async () => {
    const v1 = await build(write('v1.jsonl', '{"id":1,"n":1}\n'));
    const v2 = await build(write('v2.jsonl', '{"id":1,"n":1}\nnot json\n{"id":2,"n":"x"}\n{"id":1,"n":3}\n'), {
      append: { snapshot: v1.snapshot, fields: v1.fields },
      upsert: { key: 'id' },
      onError: 'skip',
      rejectsFile: rejectsFile(),
    });
    expect(v2.rejects?.map((r) => [r.line, r.reason])).toEqual([
      [2, expect.stringMatching(/^not valid JSON/)],
      [3, expect.stringMatching(/^cannot read .*x.* as integer$/)],
      [4, 'repeats the key id="1" of line 1'],
    ]);
    expect((await readBack(v2.snapshot)).map((r) => [Number(r.id), Number(r.n)])).toEqual([[1, 1]]);
  });

  it('names a Parquet row by its record, and checks the key of a first load too', async () => {
    const file = path.join(dir, 'dup.parquet');
    const db = await DuckDBInstance.create(':memory:');
    const c = await db.connect();
    try {
      await c.run(
        `COPY (SELECT * FROM (VALUES (1, 'a'), (2, 'b'), (1, 'c')) t(id, name)) TO '${file.replace(/'/g, "''")}' (FORMAT parquet)`,
      );
    } finally {
      c.closeSync();
      db.closeSync();
    }
    await expect(build(file, { upsert: { key: 'id' } })).rejects.toThrow(
      /^dup\.parquet, record 3, column "id": repeats the key id="1" of record 1/,
    );
    const built = await build(file, { upsert: { key: 'id' }, onError: 'skip' });
    expect(pairs(await readBack(built.snapshot))).toEqual([
      ['1', 'a'],
      ['2', 'b'],
    ]);
    expect(built.replaced).toBe(0);
  });

  it('refuses a key that is not one of the fields, naming both', async () => {
    const v1 = await build(write('v1.csv', 'id,name\n1,a\n'));
    const attempt = build(write('v2.csv', 'id,name\n2,b\n'), {
      append: { snapshot: v1.snapshot, fields: v1.fields },
      upsert: { key: 'nope' },
    });
    await expect(attempt).rejects.toThrow('The upsert key "nope" is not one of the fields ("id", "name")');
    await expect(build(write('v3.csv', 'id,name\n2,b\n'), { upsert: { key: 'ID' } })).rejects.toThrow(
      'The upsert key "ID" is not one of the fields ("id", "name")',
    );
  });
});

describe('the report of a load', () => {
  it('shows how far a failed strict load got: the rows read and the row that failed it', async () => {
    const report: LoadReport = { rejected: 0, rejects: [] };
    await expect(build(write('ragged.csv', 'x,y\n1,2\n3\n4,5\n'), { report })).rejects.toThrow(/^ragged\.csv:3/);
    expect(report).toEqual({
      rowsRead: 3,
      rejected: 1,
      rejects: [{ line: 3, column: 'y', reason: 'the row has 1 field where the header has 2', text: '3' }],
    });
    expect(leftovers()).toEqual([]);
  });

  it('lists the first 100 rejected rows of a skip load, their text clipped, and counts them all', async () => {
    const long = `${'z'.repeat(300)}`;
    const bad = Array.from({ length: 150 }, (_, i) => (i === 0 ? long : `only${i}`));
    const csv = ['a,b', '1,2', ...bad, '3,4'].join('\n');
    const report: LoadReport = { rejected: 0, rejects: [] };
    const built: BuiltSnapshot = await build(write('bad.csv', csv), {
      report,
      onError: 'skip',
      rejectsFile: path.join(dataDir, 'rejects', 't-v1.jsonl'),
    });
    expect({ read: built.rowsRead, loaded: built.recordCount, rejected: built.rowsRejected }).toEqual({
      read: 152,
      loaded: 2,
      rejected: 150,
    });
    expect({ rowsRead: report.rowsRead, rejected: report.rejected, listed: report.rejects.length }).toEqual({
      rowsRead: 152,
      rejected: 150,
      listed: 100,
    });
    expect(report.rejects.map((r) => r.line)).toEqual(Array.from({ length: 100 }, (_, i) => i + 3));
    expect(report.rejects[0].text).toBe(`${'z'.repeat(200)}…`);
    expect(built.rejects).toEqual(report.rejects);
    // The rejects file keeps every row and more of each text.
    const listed = rejectsListed(path.join(dataDir, 'rejects', 't-v1.jsonl'));
    expect(listed).toHaveLength(150);
    expect(listed[0].text).toBe(long);
  });
});
