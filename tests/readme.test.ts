import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { useDemoStack } from './support/demo-stack';
import { REPO_ROOT } from './support/quarry-process';
import { jsonValues } from './support/json-values';

/*
 * README.md's door as written: its first block is the two commands, its table the variables `npm start`
 * reads, and the "Try" command scripts/start.sh prints in its banner runs, against a server holding exactly
 * what `npm start` serves, with the two variables the banner exports. Every other example of the README and
 * of docs/ runs in tests/docs.test.ts (shell) and tests/client-package.test.ts (TypeScript); the two
 * commands themselves in tests/start-command.test.ts and CI: they are what runs this.
 */

const run = promisify(execFile);
const demo = useDemoStack();
const README = fs.readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8');
const START_SH = fs.readFileSync(path.join(REPO_ROOT, 'scripts', 'start.sh'), 'utf8');

const shBlocks = [...README.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1]);

async function bash(script: string): Promise<string> {
  const { stdout } = await run('bash', ['-euo', 'pipefail', '-c', script], {
    cwd: REPO_ROOT,
    env: { ...process.env, QUARRY_URL: demo().url, QUARRY_TOKEN: demo().token },
    maxBuffer: 64 * 1024 * 1024,
  });
  return stdout;
}

/** What the banner prints, from start.sh's own heredoc with the values start.sh would give it. */
async function banner(): Promise<string> {
  const heredoc = /^cat <<MSG\n[\s\S]*?^MSG$/m.exec(START_SH)?.[0];
  expect(heredoc).toBeDefined();
  const url = new URL(demo().url);
  const vars = `PORT=${url.port}; QUARRY_URL=${demo().url}; QUARRY_TOKEN=${demo().token}; QUARRY_DATA_DIR=./data\n`;
  return bash(vars + heredoc!);
}

describe('README.md', () => {
  it('keeps its two commands at the top', () => {
    expect(shBlocks[0]).toMatch(/^npm start .*\nnpm test .*\n$/);
  });

  it('documents every variable npm start reads, and start.sh reads each one it documents', () => {
    const table = /What `npm start` honours[\s\S]*?\n\n((?:\|.*\n)+)/.exec(README)?.[1] ?? '';
    const documented = [...table.matchAll(/^\| `([A-Z_]+)`/gm)].map((m) => m[1]);
    expect(documented).toEqual(['PORT', 'HOST', 'QUARRY_DATA_DIR']);
    const scripts = START_SH + fs.readFileSync(path.join(REPO_ROOT, 'scripts', 'sample-data.sh'), 'utf8');
    for (const name of documented) expect(scripts).toContain(`\${${name}:-`);
  });
});

describe('the banner npm start prints', () => {
  it('exports the variables the README uses, with the address the server answers on', async () => {
    const text = await banner();
    expect(text).toContain(`export QUARRY_URL=${demo().url}\n`);
    expect(text).toContain(`export QUARRY_TOKEN=${demo().token}\n`);
    expect(text).toContain(`${demo().url}/console`);
  });

  it('its "Try" command runs as printed and sorts by a field every hit has', async () => {
    const text = await banner();
    const command = /^Try.*\n\n([\s\S]*?)\n\n/m.exec(text)?.[1];
    expect(command).toMatch(/^ {2}curl /);
    const [answer] = jsonValues(await bash(command!)) as Array<{
      result: { data: { params?: unknown; records: Array<Record<string, unknown>>; total: number } };
    }>;
    const request = JSON.parse(/-d '(.*)'$/m.exec(command!)![1]) as {
      params: { sort: Array<{ field: string; direction: string }> };
    };
    const { field, direction } = request.params.sort[0];
    const records = answer.result.data.records;
    expect(records.length).toBeGreaterThan(1);
    const values = records.map((r) => r[field]);
    expect(values.every((v) => typeof v === 'number')).toBe(true);
    const sorted = [...(values as number[])].sort((a, b) => (direction === 'desc' ? b - a : a - b));
    expect(values).toEqual(sorted);
    // The first thing a newcomer reads: films whose ratings are filled, not a column of nulls.
    for (const r of records)
      for (const f of ['IMDB Rating', 'Rotten Tomatoes Rating']) expect(r[f]).toEqual(expect.any(Number));
  });
});
