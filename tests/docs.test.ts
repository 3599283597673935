import fs from 'node:fs';
import path from 'node:path';

/**
 * The repo documents itself: docs/api.md is what the contract says today, and every link in the README
 * and docs/ resolves to a file of this repo (no page points at documents a newcomer does not have).
 */
const ROOT = path.join(__dirname, '..');
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { renderApiDocs, OUT } = require('../scripts/gen-api-docs.js') as { renderApiDocs: () => string; OUT: string };
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { renderReadme, README } = require('../scripts/gen-config-docs.js') as {
  renderReadme: (text: string) => string;
  README: string;
};

function markdownFiles(): string[] {
  const docs = fs
    .readdirSync(path.join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => path.join('docs', f));
  const services = ['bench/README.md', 'packages/client/README.md'].filter((f) => fs.existsSync(path.join(ROOT, f)));
  return ['README.md', ...docs, ...services];
}

/** Relative link targets of a markdown file: `[text](target)` and `![alt](target)`, anchors dropped. */
function relativeLinks(file: string): string[] {
  const text = fs.readFileSync(path.join(ROOT, file), 'utf8').replace(/```[\s\S]*?```/g, '');
  const links = [...text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => m[1]);
  return links.filter((l) => !/^[a-z]+:/i.test(l) && !l.startsWith('#')).map((l) => l.split('#')[0]);
}

describe('docs', () => {
  it('docs/api.md is what scripts/gen-api-docs.js writes from the contract (npm run gen:api-docs)', () => {
    expect(fs.readFileSync(OUT, 'utf8')).toBe(renderApiDocs());
  });

  it("README.md's settings tables are what scripts/gen-config-docs.js writes from packages/config", () => {
    const readme = fs.readFileSync(README, 'utf8');
    const rendered = renderReadme(readme);
    if (rendered !== readme) {
      const [now, want] = [readme.split('\n'), rendered.split('\n')];
      const at = now.findIndex((line, i) => line !== want[i]);
      throw new Error(
        `README.md's settings differ from packages/config/src/settings (line ${at + 1}); run npm run gen:config-docs ` +
          `(after building packages/config) and commit README.md.\n  README:    ${now[at]}\n  generated: ${want[at]}`,
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

  it.each(markdownFiles())('every relative link in %s resolves inside the repo', (file) => {
    const broken = relativeLinks(file).filter((target) => {
      const resolved = path.resolve(ROOT, path.dirname(file), decodeURIComponent(target));
      return !resolved.startsWith(ROOT + path.sep) || !fs.existsSync(resolved);
    });
    expect(broken).toEqual([]);
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
