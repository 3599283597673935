import { execFile } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { AGGREGATIONS, SHOW_AS } from '@quarry/contract';
import { useDemoStack } from './support/demo-stack';
import { REPO_ROOT } from './support/quarry-process';

/*
 * @quarry/client as someone outside this repository gets it: `npm pack`, installed from the tarball in a
 * scratch project in the system temp dir (no workspace above it), with the TypeScript and @types/node this
 * repo builds with from the registry; the TypeScript examples of packages/client/README.md and docs/client.md
 * type-checked there by tsc (strict, the package's own .d.ts checked too) and run with node against a live
 * server holding what `npm start` serves, with the two variables its banner prints.
 */

const run = promisify(execFile);
const CLIENT_DIR = path.join(REPO_ROOT, 'packages', 'client');
const demo = useDemoStack();

interface PackResult {
  filename: string;
  files: Array<{ path: string }>;
}

/** The ```ts blocks of a markdown file. */
function tsBlocks(file: string): string[] {
  const text = fs.readFileSync(path.join(REPO_ROOT, file), 'utf8');
  return [...text.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((m) => m[1]);
}

const examples = [
  ...tsBlocks('packages/client/README.md').map((code, i) => ({ name: `client-readme-${i}`, code })),
  ...tsBlocks('docs/client.md').map((code, i) => ({ name: `docs-client-${i}`, code })),
];

let scratch = '';
let packed: PackResult;

beforeAll(async () => {
  scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-client-consumer-'));
  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', scratch], { cwd: CLIENT_DIR });
  packed = (JSON.parse(stdout) as PackResult[])[0];
  const version = (name: string) =>
    (
      JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'node_modules', name, 'package.json'), 'utf8')) as {
        version: string;
      }
    ).version;
  fs.writeFileSync(
    path.join(scratch, 'package.json'),
    JSON.stringify({ name: 'quarry-client-consumer', private: true, type: 'module' }, null, 2),
  );
  fs.writeFileSync(
    path.join(scratch, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'nodenext',
        moduleResolution: 'nodenext',
        strict: true,
        skipLibCheck: false,
        types: ['node'],
        outDir: 'out',
      },
      include: ['*.ts'],
    }),
  );
  for (const e of examples) fs.writeFileSync(path.join(scratch, `${e.name}.ts`), e.code);
  await run(
    'npm',
    [
      'install',
      '--no-audit',
      '--no-fund',
      `./${packed.filename}`,
      `typescript@${version('typescript')}`,
      `@types/node@${version('@types/node')}`,
    ],
    { cwd: scratch, timeout: 240_000 },
  );
}, 300_000);

afterAll(() => {
  if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
});

describe('the packed @quarry/client', () => {
  it('holds its README, its built code and types, and the sources its maps point at; no tests', () => {
    const files = packed.files.map((f) => f.path).sort();
    expect(files).toEqual(expect.arrayContaining(['README.md', 'package.json', 'dist/index.js', 'dist/index.d.ts']));
    expect(files.filter((f) => f.endsWith('.test.ts') || f.endsWith('.test.js'))).toEqual([]);
    expect(files.filter((f) => f.endsWith('.tsbuildinfo'))).toEqual([]);
    const installed = path.join(scratch, 'node_modules', '@quarry', 'client');
    const maps = files.filter((f) => f.endsWith('.map'));
    expect(maps.length).toBeGreaterThan(0);
    for (const map of maps) {
      const { sources } = JSON.parse(fs.readFileSync(path.join(installed, map), 'utf8')) as { sources: string[] };
      for (const source of sources)
        expect(fs.existsSync(path.resolve(installed, path.dirname(map), source))).toBe(true);
    }
    // Every file package.json names is in the tarball.
    const pkg = JSON.parse(fs.readFileSync(path.join(installed, 'package.json'), 'utf8')) as {
      main: string;
      types: string;
      dependencies?: object;
    };
    expect(files).toEqual(expect.arrayContaining([pkg.main, pkg.types]));
    expect(pkg.dependencies).toBeUndefined();
  });

  it('exports the contract’s word lists as values, as the server validates them', () => {
    const installed = createRequire(path.join(scratch, 'package.json'))('@quarry/client') as Record<string, unknown>;
    expect(installed.AGGREGATIONS).toEqual(AGGREGATIONS);
    expect(installed.SHOW_AS).toEqual(SHOW_AS);
  });

  it('type-checks every TypeScript example of the client README and docs/client.md with tsc, strict, outside the workspace', async () => {
    expect(examples.length).toBeGreaterThanOrEqual(2);
    const tsc = path.join(scratch, 'node_modules', '.bin', 'tsc');
    const res = await run(tsc, ['-p', '.'], { cwd: scratch }).catch((err: { stdout: string }) => err);
    expect(res.stdout).toBe('');
    for (const e of examples) expect(fs.existsSync(path.join(scratch, 'out', `${e.name}.js`))).toBe(true);
  }, 120_000);

  it('runs the client README example as written against a live server with npm start’s data', async () => {
    const { stdout } = await run(process.execPath, [path.join('out', 'client-readme-0.js')], {
      cwd: scratch,
      env: { ...process.env, QUARRY_URL: demo().url, QUARRY_TOKEN: demo().token },
    });
    const lines = stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^\d+ films by Spielberg; the top grossing: .*Jurassic Park/);
    // The three genres that grossed most, each with its sum: numbers, from table.data (the JSON table).
    const genres = lines.slice(1, 4).map((l) => /^(.+): (\d+)$/.exec(l));
    expect(genres.every((g) => g !== null)).toBe(true);
    const sums = genres.map((g) => Number(g![2]));
    expect(sums).toEqual([...sums].sort((a, b) => b - a));
    // The echarts line: the option's keys, for the size asked.
    expect(lines[4]).toMatch(/^Pie2D option for 800×600: .*\bseries\b/);
    expect(lines[5]).toMatch(/^airports \(\d+ records\), movies \(3201 records\)$/);
    expect(lines).toContain('"Dramas by MPAA rating" runs CROSSTAB.EXECUTE on movies');
    expect(lines.find((l) => l.startsWith('request '))).toMatch(/^request \S+: cache (miss|hit)$/);
    expect(lines.find((l) => l.startsWith('400 '))).toMatch(/^400 Bad Request - \S/);
    expect(lines.slice(-2)).toEqual(['ABORTED', 'NETWORK_ERROR']);
  }, 60_000);

  it.each(examples.filter((e) => e.name.startsWith('docs-client-')).map((e) => [e.name]))(
    'runs %s (docs/client.md) as written against the live server',
    async (name) => {
      const res = await run(process.execPath, [path.join('out', `${name}.js`)], {
        cwd: scratch,
        env: { ...process.env, QUARRY_URL: demo().url, QUARRY_TOKEN: demo().token },
      });
      expect(res.stderr).toBe('');
      expect(res.stdout).toMatch(/\S/);
    },
    60_000,
  );
});
