import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { useDemoStack } from './support/demo-stack';
import { REPO_ROOT } from './support/quarry-process';

const run = promisify(execFile);
const CLIENT = path.join(REPO_ROOT, 'clients', 'python');
/** Debian's python3 (scripts/ensure-system-deps.sh installs it with mypy), not a version manager's shim. */
const PYTHON = fs.existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';
const RATE_LIMIT = '1000';
/** Checked with the package: its tests and the usage the types must accept (not the mistakes they refuse). */
const CHECKED = ['tests/test_live.py', 'tests/test_transport.py', 'tests/typing/typed_usage.py'];

async function python(args: string[], env: Record<string, string> = {}, cwd = CLIENT) {
  try {
    const { stdout, stderr } = await run(PYTHON, args, {
      cwd,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: os.tmpdir(),
        PYTHONPATH: CLIENT,
        PYTHONDONTWRITEBYTECODE: '1',
        ...env,
      },
      maxBuffer: 16 * 1024 * 1024,
    });
    return { code: 0, out: stdout + stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : -1, out: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}

/** The ```python blocks of the manual that use quarry_client: each is run as a script against the demo. */
function pythonExamples(): Array<[string, string]> {
  const pages = ['README.md', ...fs.readdirSync(path.join(REPO_ROOT, 'docs')).map((f) => `docs/${f}`)].filter((p) =>
    p.endsWith('.md'),
  );
  return pages.flatMap((page) =>
    [...fs.readFileSync(path.join(REPO_ROOT, page), 'utf8').matchAll(/^```python\n([\s\S]*?)^```$/gm)]
      .map((m) => m[1]!)
      .filter((block) => block.includes('quarry_client'))
      .map((block, i) => [`${page} #${i}`, block] as [string, string]),
  );
}

/*
 * The Python client (clients/python, docs/python-client.md) with Debian's python3: its generated module
 * is what the contract generates today, mypy --strict accepts it and refuses calls the contract refuses,
 * and its tests and the manual's Python examples run against the server `npm start` serves.
 */
describe('the Python client', () => {
  const demo = useDemoStack(() => ({ QUARRY_RATE_LIMIT: RATE_LIMIT, QUARRY_RATE_BURST: RATE_LIMIT }));
  const live = () => ({ QUARRY_URL: demo().url, QUARRY_TOKEN: demo().token, QUARRY_RATE_LIMIT: RATE_LIMIT });

  it('is what the contract generates today (run `npm run gen:client` after changing the contract)', () => {
    const fresh = execFileSync(process.execPath, [path.join(REPO_ROOT, 'scripts/gen-python-client.js'), '--stdout'], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
    });
    expect(fs.readFileSync(path.join(CLIENT, 'quarry_client', '_generated.py'), 'utf8')).toBe(fresh);
  });

  it('type-checks with mypy --strict, and mypy refuses each call the contract refuses', async () => {
    const ok = await python(['-m', 'mypy', '--no-incremental', '--cache-dir=/dev/null', 'quarry_client', ...CHECKED]);
    expect(ok).toEqual({ code: 0, out: expect.stringMatching(/^Success: no issues found in \d+ source files/m) });
    const mistakes = await python([
      '-m',
      'mypy',
      '--no-incremental',
      '--cache-dir=/dev/null',
      'tests/typing/typed_mistakes.py',
    ]);
    expect(mistakes.code).toBe(1);
    const source = fs.readFileSync(path.join(CLIENT, 'tests/typing/typed_mistakes.py'), 'utf8').split('\n');
    const marked = source.flatMap((line, i) => (/# wrong:/.test(line) ? [i + 1] : []));
    const flagged = [
      ...new Set([...mistakes.out.matchAll(/typed_mistakes\.py:(\d+): error:/g)].map((m) => Number(m[1]))),
    ];
    expect(marked.length).toBeGreaterThanOrEqual(6);
    expect(flagged.sort((a, b) => a - b)).toEqual(marked);
  }, 120_000);

  it("passes its own tests: the transport's against a scripted server, and the live ones against Quarry", async () => {
    const res = await python(['-m', 'unittest', '-v', 'tests.test_transport', 'tests.test_live'], live());
    if (res.code !== 0) throw new Error(res.out);
    const ran = /^Ran (\d+) tests? in/m.exec(res.out);
    expect(Number(ran?.[1])).toBeGreaterThanOrEqual(16);
    expect(res.out).not.toMatch(/skipped/);
    expect(res.out).toMatch(/^OK$/m);
  }, 300_000);

  const examples = pythonExamples();
  it('has Python examples in the manual', () => expect(examples.length).toBeGreaterThanOrEqual(3));

  it.each(examples)(
    'Python example %s runs as written against the demo',
    async (_name, block) => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-py-example-'));
      try {
        fs.writeFileSync(path.join(dir, 'example.py'), block);
        const res = await python([path.join(dir, 'example.py')], live(), dir);
        if (res.code !== 0) throw new Error(res.out);
        expect(res.out).toMatch(/\S/);
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    },
    120_000,
  );
});
