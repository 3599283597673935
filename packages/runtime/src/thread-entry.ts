import fs from 'node:fs';
import path from 'node:path';

/**
 * The compiled file a worker thread runs, `<name>.js` beside the caller. Code run from its TypeScript
 * source (jest) has no .js there, so it takes the same file from the package's build (`src/` → `dist/`).
 */
export function threadEntry(dir: string, name: string): string {
  const beside = path.join(dir, `${name}.js`);
  if (fs.existsSync(beside)) return beside;
  const built = path.join(dir.replace(`${path.sep}src${path.sep}`, `${path.sep}dist${path.sep}`), `${name}.js`);
  if (fs.existsSync(built)) return built;
  throw new Error(`no ${name}.js beside ${dir} or in its build (run the build first)`);
}
