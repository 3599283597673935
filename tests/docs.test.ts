import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { useDemoStack } from './support/demo-stack';
import { jsonValues } from './support/json-values';

/**
 * The repo documents itself, and its documentation runs. docs/api.md is what the contract says today and
 * docs/configuration.md's settings tables what packages/config declares; every relative link and `#anchor`
 * of the README and docs/ resolves to a file (and a heading) of this repo; and every shell example of
 * README.md and docs/*.md runs as written, twice over (an example that works once but answers 409 the
 * second time is broken), against a server holding exactly what `npm start` serves, with the two variables
 * its banner exports:
 *
 * - a ```sh block that calls the API ($QUARRY_URL) succeeds at every call: each curl's answer is JSON, a
 *   JSON-RPC answer has a result and no error, any other answer is no problem document;
 * - a ```sh block of `npx quarry …` commands (the CLI) exits 0, on the data directory of that server;
 * - no other ```sh block exists, but the README's first (`npm start`, `npm test`): it is what runs this.
 *
 * The ```ts examples run in tests/client-package.test.ts, from the packed client; the README's two commands
 * and the banner in tests/readme.test.ts and tests/start-command.test.ts.
 */
const ROOT = path.join(__dirname, '..');
const run = promisify(execFile);
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { renderApiDocs, OUT } = require('../scripts/gen-api-docs.js') as { renderApiDocs: () => string; OUT: string };
// eslint-disable-next-line @typescript-eslint/no-require-imports
const config = require('../scripts/gen-config-docs.js') as {
  renderConfigDocs: (text: string) => string;
  OUT: string;
};

/** The pages a reader is sent to: the README, every page of docs/, and the two other READMEs. */
function markdownFiles(): string[] {
  const services = ['bench/README.md', 'packages/client/README.md'].filter((f) => fs.existsSync(path.join(ROOT, f)));
  return [...manualPages(), ...services];
}

/** The manual: README.md and docs/*.md, whose examples run here. */
function manualPages(): string[] {
  const docs = fs
    .readdirSync(path.join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => path.join('docs', f));
  return ['README.md', ...docs];
}

const read = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8');

/** A page's text without its fenced code blocks, and with its inline code spans blanked. */
function prose(file: string): string {
  return read(file)
    .replace(/^```[\s\S]*?^```$/gm, '')
    .replace(/`[^`\n]+`/g, 'code');
}

/** The anchors GitHub gives a page's headings (github-slugger: lower case, punctuation dropped, repeats -1, -2). */
function anchors(file: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  const text = read(file).replace(/^```[\s\S]*?^```$/gm, '');
  for (const [, heading] of text.matchAll(/^#{1,6} +(.+?) *#* *$/gm)) {
    const plain = heading
      .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
      .replace(/<[^>]+>/g, '')
      .replace(/[`*]/g, '');
    const base = plain
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
      .replace(/ /g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  for (const [, id] of text.matchAll(/<a (?:id|name)="([^"]+)"/g)) out.add(id);
  return out;
}

/** Relative link targets of a page: `[text](target)`, `![alt](target)` and `<img src="target">`. */
function relativeLinks(file: string): string[] {
  const text = prose(file);
  const links = [
    ...[...text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => m[1]),
    ...[...text.matchAll(/<img [^>]*src="([^"]+)"/g)].map((m) => m[1]),
  ];
  return links.filter((l) => !/^[a-z]+:/i.test(l));
}

/** What a link does not reach: a missing file, a path outside the repo, or a heading the page lacks. */
function brokenLink(file: string, link: string): string | undefined {
  const [target, anchor] = link.split('#') as [string, string | undefined];
  const resolved = target ? path.resolve(ROOT, path.dirname(file), decodeURIComponent(target)) : path.join(ROOT, file);
  if (!resolved.startsWith(ROOT + path.sep) || !fs.existsSync(resolved)) return `${link}: no such file`;
  if (anchor !== undefined && resolved.endsWith('.md')) {
    const page = path.relative(ROOT, resolved);
    if (!anchors(page).has(decodeURIComponent(anchor))) return `${link}: ${page} has no heading #${anchor}`;
  }
  return undefined;
}

/** The ```sh blocks of the manual, with the page each is on. */
function shBlocks(): Array<{ page: string; block: string }> {
  return manualPages().flatMap((page) =>
    [...read(page).matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => ({ page, block: m[1] })),
  );
}

const isApiExample = (block: string) => block.includes('$QUARRY_URL');
const isCliExample = (block: string) =>
  block
    .split('\n')
    .filter((line) => line.trim() && !line.startsWith('#'))
    .every((line) => line.startsWith('npx quarry '));
const isTheTwoCommands = (page: string, block: string) =>
  page === 'README.md' && /^npm start .*\nnpm test /.test(block);

const examples = shBlocks();
const apiExamples = examples.filter((e) => isApiExample(e.block));
const cliExamples = examples.filter((e) => !isApiExample(e.block) && isCliExample(e.block));
const numbered = (list: typeof examples) => list.map((e, i) => [`${e.page} #${i}`, e.block] as const);

describe('docs', () => {
  it('docs/api.md is what scripts/gen-api-docs.js writes from the contract (npm run gen:api-docs)', () => {
    expect(fs.readFileSync(OUT, 'utf8')).toBe(renderApiDocs());
  });

  it("docs/configuration.md's settings tables are what scripts/gen-config-docs.js writes from packages/config", () => {
    const page = fs.readFileSync(config.OUT, 'utf8');
    const rendered = config.renderConfigDocs(page);
    if (rendered !== page) {
      const [now, want] = [page.split('\n'), rendered.split('\n')];
      const at = now.findIndex((line, i) => line !== want[i]);
      throw new Error(
        `docs/configuration.md's settings differ from packages/config/src/settings (line ${at + 1}); run ` +
          `npm run gen:config-docs (after building packages/config) and commit docs/configuration.md.\n` +
          `  page:      ${now[at]}\n  generated: ${want[at]}`,
      );
    }
  });

  it('documents every method of the contract with its params and an example', () => {
    const api = fs.readFileSync(OUT, 'utf8');
    for (const method of ['QUERIES.EXECUTE', 'INDEXES.FIND', 'CROSSTAB.EXECUTE', 'REPORTS.FIND', 'REPORTS.METADATA']) {
      expect(api).toContain(`## ${method}`);
    }
    expect(api).toMatch(/\| `pageSize` \| integer \| {2}\| `50` \| 1 to 1000 \|/);
  });

  it('lists a keyword parameter by its words, never as a case-folded pattern', () => {
    const api = fs.readFileSync(OUT, 'utf8');
    expect(api).not.toMatch(/\[[a-z][A-Z]\]\[[a-z][A-Z]\]/);
    expect(api).toMatch(/\| `chartType` \|[^\n]*one of `Column2D`, `Column3D`,[^\n]*`Scatter` \(any case\)/);
    expect(api).toMatch(/\| `imageFormat` \|[^\n]*one of `png`, `svg`, `echarts` \|/);
  });

  it.each(markdownFiles())('every relative link and #anchor in %s resolves inside the repo', (file) => {
    const links = relativeLinks(file);
    if (file === 'README.md') expect(links.length).toBeGreaterThan(20);
    const broken = links.map((link) => brokenLink(file, link)).filter((b) => b !== undefined);
    expect(broken).toEqual([]);
  });

  it('the README is a door: at most 250 lines, none over 200 characters, a link to every page of docs/', () => {
    const readme = read('README.md');
    const lines = readme.trimEnd().split('\n');
    expect(lines.length).toBeLessThanOrEqual(250);
    expect(lines.filter((line) => line.length > 200)).toEqual([]);
    const linked = new Set(relativeLinks('README.md').map((l) => path.normalize(l.split('#')[0])));
    expect(manualPages().filter((page) => page !== 'README.md' && !linked.has(page))).toEqual([]);
  });

  it('no README, doc or source comment points outside the repo (../shared, SPEC.md, DESIGN.md)', () => {
    const offenders: string[] = [];
    const walk = (dir: string) => {
      for (const entry of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
        const rel = path.join(dir, entry.name);
        if (entry.isDirectory()) {
          if (!['node_modules', 'dist', 'data', 'test-output', '.git', '.turbo', 'coverage'].includes(entry.name)) {
            walk(rel);
          }
        } else if (/\.(ts|js|cjs|mjs|md|sh|ya?ml|proto)$/.test(entry.name) && rel !== 'tests/docs.test.ts') {
          const text = fs.readFileSync(path.join(ROOT, rel), 'utf8');
          if (/\.\.\/shared|\b(SPEC|DESIGN)\.md\b/.test(text)) offenders.push(rel);
        }
      }
    };
    for (const dir of ['apps', 'services', 'packages', 'tests', 'scripts', 'bench', 'docs', 'proto', 'infra', 'k8s']) {
      if (fs.existsSync(path.join(ROOT, dir))) walk(dir);
    }
    if (/\.\.\/shared|\b(SPEC|DESIGN)\.md\b/.test(fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8'))) {
      offenders.push('README.md');
    }
    expect(offenders).toEqual([]);
  });
});

describe('the examples of README.md and docs/*.md', () => {
  const demo = useDemoStack();

  async function bash(script: string): Promise<string> {
    const { stdout } = await run('bash', ['-euo', 'pipefail', '-c', script], {
      cwd: ROOT,
      env: {
        ...process.env,
        QUARRY_URL: demo().url,
        QUARRY_TOKEN: demo().token,
        // The CLI reads the server's data directory, as `npx quarry …` after `npm start` reads ./data.
        QUARRY_DATA_DIR: demo().dataDir,
      },
      maxBuffer: 64 * 1024 * 1024,
    });
    return stdout;
  }

  it('are API examples with the banner’s variables, CLI examples, or the README’s two commands; nothing else', () => {
    expect(apiExamples.length).toBeGreaterThanOrEqual(3);
    expect(cliExamples.length).toBeGreaterThanOrEqual(1);
    const unrun = examples.filter(
      (e) => !isApiExample(e.block) && !isCliExample(e.block) && !isTheTwoCommands(e.page, e.block),
    );
    expect(unrun).toEqual([]);
    expect(examples.filter((e) => isTheTwoCommands(e.page, e.block))).toHaveLength(1);
  });

  it.each(manualPages())('%s uses the banner’s variables, never another address or token variable', (page) => {
    expect(read(page)).not.toMatch(/localhost:8080|\$TOKEN\b|Bearer_TOKEN|^H=/m);
  });

  it.each(numbered(apiExamples))(
    'API example %s runs as written, twice: every call succeeds each time',
    async (_name, block) => {
      expect(block).not.toMatch(/<guid>|<token>/);
      const calls = (block.match(/^curl /gm) ?? []).length;
      for (let round = 0; round < 2; round++) {
        const answers = jsonValues(await bash(block)) as Array<Record<string, unknown>>;
        expect(answers).toHaveLength(calls);
        for (const answer of answers) {
          if ('jsonrpc' in answer) {
            expect(answer.error).toBeUndefined();
            expect(answer.result).toBeDefined();
          } else if (!('openrpc' in answer)) {
            // An HTTP endpoint's own answer (an upload's accounting): never an RFC 7807 problem.
            expect(answer).not.toMatchObject({ title: expect.any(String), status: expect.any(Number) });
          }
        }
      }
    },
    120_000,
  );

  it.each(numbered(cliExamples))(
    'CLI example %s runs as written, twice: every command exits 0',
    async (_name, block) => {
      for (let round = 0; round < 2; round++) expect(await bash(block)).toMatch(/\S/);
    },
    120_000,
  );
});
