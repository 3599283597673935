import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { createIdentity, type Identity } from './support/identities';
import { rpcClient } from './support/http';
import { makeDataDir, QUARRY_BIN, runCli, startQuarry, type RunningQuarry } from './support/quarry-process';

/**
 * Loading without loss, as an operator meets it: `quarry index load` against a running server. A
 * malformed file exits 1 naming the line and publishes nothing (the previous version keeps serving);
 * skipped rows are listed; standard input and --append work; progress comes by bytes.
 */
const dataDir = makeDataDir('quarry-loading-');
const env = { QUARRY_DATA_DIR: dataDir };
let quarry: RunningQuarry;
let analyst: Identity;

function file(name: string, content: string): string {
  const f = path.join(dataDir, name);
  fs.writeFileSync(f, content);
  return f;
}

async function records(index: string): Promise<{ total: number; records: Array<Record<string, unknown>> }> {
  const res = await rpcClient(quarry.baseUrl, analyst.token).call('QUERIES.EXECUTE', { index, pageSize: 100 });
  const body = res.json as { result: { data: { total: number; records: Array<Record<string, unknown>> } } };
  return body.result.data;
}

/** The CLI with a file on standard input. */
function runWithStdin(args: string[], input: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [QUARRY_BIN, ...args], { env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input);
  });
}

beforeAll(async () => {
  expect((await runCli(['index', 'load', 'kv', file('good.csv', 'k,v\na,1\nb,2\n')], env)).code).toBe(0);
  quarry = await startQuarry({ topology: 'all', dataDir });
  analyst = await createIdentity(dataDir, 'analyst', { indexes: '*' });
  // A hang guard: the start alone may take up to a minute on a loaded machine.
}, 180_000);
afterAll(async () => {
  await quarry?.stop();
});

describe('quarry index load', () => {
  it('says how many lines an unterminated quote kept from being read, with their numbers', async () => {
    const csv = file('open-quote.csv', 'id,name,n\n1,a,1\n2,b,2\n3,c,3\n4,"d,4\n5,e,5\n6,f,x\n7,g,7,extra\n8,h\n');
    const strict = await runCli(['index', 'load', 'oq', csv], env);
    expect(strict.code).toBe(1);
    expect(strict.stderr).toContain(
      'open-quote.csv:5, column "name": a quoted value starts here and its closing quote never comes; the 4 lines after it (lines 6-9) are inside that quote and were not read or checked',
    );
    const skipped = await runCli(['index', 'load', 'oq', csv, '--on-error', 'skip'], env);
    expect(skipped.code).toBe(0);
    expect(skipped.stdout).toContain('rows read: 4 = 3 loaded + 1 rejected');
    expect(skipped.stdout).toContain('; 4 more lines were not read: inside an unterminated quote');
  });

  it('says which value made a column text, where, and how to declare its type instead', async () => {
    const csv = file(
      'typed.csv',
      'id,year,day,amount\n1,2001,2020-01-01,1.5\n2,2002,2020-01-02,2\n3,2003,2020-01-03,x\n4,02008,2008-13-45,4\n5,2005,2020-01-05,5\n',
    );
    const res = await runCli(['index', 'load', 'typed', csv], env);
    expect(res.code).toBe(0);
    expect(res.stdout).toContain('fields: id (integer), year (string), day (string), amount (string)');
    for (const line of [
      '"year" is text: line 5 holds "02008", which is not an integer as written; --type "year"=integer loads the column as one',
      '"day" is text: line 5 holds "2008-13-45", which is not a date as written; --type "day"=date',
      '"amount" is text: line 4 holds "x", which is not a number as written; --type "amount"=number',
    ])
      expect(res.stdout).toContain(line);
    // Past the sample: the full scan finds it, and names its line.
    const late = file(
      'late.csv',
      ['id,score', ...Array.from({ length: 2999 }, (_, i) => `${i + 1},${i * 3}`), '3000,abc', ''].join('\n'),
    );
    const lateRes = await runCli(['index', 'load', 'late', late], env);
    expect(lateRes.stdout).toContain('"score" is text: line 3001 holds "abc"');
    // A column whose every value reads says nothing.
    expect((await runCli(['index', 'load', 'fine', file('fine.csv', 'a,b\n1,x\n2,y\n')], env)).stdout).not.toContain(
      'is text:',
    );
  });

  it('keeps the wall time of a timestamp without a zone, whatever time zone the loading machine is in', async () => {
    const csv = file('tz.csv', 'id,at\n1,2001-02-03 04:05:06.123456\n2,2001-02-03 23:30:00\n');
    // DuckDB takes the machine's zone by default: under New York's, 04:05 was stored as 09:05.
    for (const zone of ['America/New_York', 'Asia/Kolkata']) {
      const loaded = await runCli(['index', 'load', 'tz', csv, '--type', 'at=date'], { ...env, TZ: zone });
      expect(loaded.code).toBe(0);
      const found = await records('tz');
      expect({ zone, at: found.records.map((r) => r.at) }).toEqual({
        zone,
        at: [expect.stringMatching(/^2001-02-03T04:05:06(\.123456)?/), expect.stringMatching(/^2001-02-03T23:30:00/)],
      });
    }
  });

  it('prints rows read = loaded + rejected', async () => {
    const res = await runCli(['index', 'load', 'kv2', file('kv2.csv', 'k,v\na,1\nb,2\nc,3\n')], env);
    expect(res.code).toBe(0);
    expect(res.stdout).toContain('rows read: 3 = 3 loaded + 0 rejected');
  });

  it('refuses a reload with one short row, and the good version keeps serving', async () => {
    const res = await runCli(['index', 'load', 'kv', file('short.csv', 'k,v\nc,3\nd\n')], env);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(
      'short.csv:3, column "v": the row has 1 field where the header has 2. Nothing was published',
    );
    const now = await records('kv');
    expect(now.records).toEqual([
      { k: 'a', v: 1 },
      { k: 'b', v: 2 },
    ]);
    expect((await runCli(['index', 'list'], env)).stdout).toMatch(/^kv\tv1\t/m);
  });

  it('refuses a JSON array with a trailing comma, naming the line and column', async () => {
    const res = await runCli(['index', 'load', 'j', file('comma.json', '[\n {"a":1},\n {"a":2,}\n]')], env);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/comma\.json:3: not valid JSON \(.+\) at column 9/);
    expect((await runCli(['index', 'list'], env)).stdout).not.toMatch(/^j\t/m);
  });

  it('--on-error skip publishes the good rows and lists the others in rejects/<index>-v<N>.jsonl', async () => {
    const res = await runCli(
      ['index', 'load', 'kv', file('ragged.csv', 'k,v\nc,3\nd\ne,5,6\nf,7\n'), '--on-error', 'skip'],
      env,
    );
    expect(res.code).toBe(0);
    const rejects = path.join(dataDir, 'rejects', 'kv-v2.jsonl');
    expect(res.stdout).toContain(`rows read: 4 = 2 loaded + 2 rejected (listed in ${rejects})`);
    expect(
      fs
        .readFileSync(rejects, 'utf8')
        .trim()
        .split('\n')
        .map((l) => (JSON.parse(l) as { line: number }).line),
    ).toEqual([3, 4]);
    expect((await records('kv')).records).toEqual([
      { k: 'c', v: 3 },
      { k: 'f', v: 7 },
    ]);
  });

  it('--max-errors refuses a load that rejects more, and bad option values are named', async () => {
    const many = file('many.csv', 'k,v\n1\n2\n3\n');
    const res = await runCli(['index', 'load', 'kv', many, '--on-error', 'skip', '--max-errors', '2'], env);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain('More than 2 rows rejected (--max-errors 2)');
    expect((await runCli(['index', 'load', 'kv', many, '--on-error', 'maybe'], env)).stderr).toContain(
      '--on-error must be one of fail, skip, got "maybe"',
    );
    expect((await runCli(['index', 'load', 'kv', many, '--max-errors', '2'], env)).stderr).toContain(
      '--max-errors goes with --on-error skip',
    );
    expect((await records('kv')).total).toBe(2);
  });

  it('reads standard input with --format, and --append adds its rows to the published ones', async () => {
    const noFormat = await runWithStdin(['index', 'load', 'kv', '-'], 'k,v\nz,9\n');
    expect(noFormat.code).toBe(1);
    expect(noFormat.stderr).toContain('Reading standard input (-) needs --format');
    const res = await runWithStdin(['index', 'load', 'kv', '-', '--format', 'csv', '--append'], 'v,k\n9,z\n');
    expect(res.code).toBe(0);
    expect(res.stdout).toContain('rows read: 1 = 1 loaded + 0 rejected; 2 rows kept from the previous version');
    expect((await records('kv')).records).toEqual([
      { k: 'c', v: 3 },
      { k: 'f', v: 7 },
      { k: 'z', v: 9 },
    ]);
    const wrong = await runWithStdin(['index', 'load', 'kv', '-', '--format', 'csv', '--append'], 'k,w\nz,9\n');
    expect(wrong.stderr).toContain('--append needs the fields of the published version; standard input lacks "v"');
  });

  it('reports progress by bytes, in order, as plain lines when not on a terminal', async () => {
    const rows = Array.from({ length: 60_000 }, (_, i) => `${i},some text for row ${i}`);
    const res = await runCli(['index', 'load', 'big', file('big.csv', ['n,t', ...rows].join('\n'))], env);
    expect(res.code).toBe(0);
    const percents = [...res.stderr.matchAll(/^loading big: (\d+)% \(([\d.]+) of ([\d.]+) MB, [\d.]+ MB\/s/gm)].map(
      (m) => Number(m[1]),
    );
    expect(percents[0]).toBe(0);
    expect(percents.at(-1)).toBe(100);
    expect(percents.length).toBeGreaterThanOrEqual(3);
    expect(percents).toEqual([...percents].sort((a, b) => a - b));
    expect(res.stdout).toContain('rows read: 60000 = 60000 loaded + 0 rejected');
  });
});
