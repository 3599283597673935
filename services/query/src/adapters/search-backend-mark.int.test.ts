import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { checkSearchBackendMark, SEARCH_BACKEND_MARK } from './search-backend-mark';

describe('the search backend mark of a data directory', () => {
  const fresh = () => fs.mkdtempSync(path.join(os.tmpdir(), 'q-mark-'));

  it('is written by the first load only, and any backend may serve an unmarked directory', () => {
    const dir = fresh();
    checkSearchBackendMark(dir, 'typesense', 'serve');
    checkSearchBackendMark(dir, 'embedded', 'drop');
    expect(fs.existsSync(path.join(dir, SEARCH_BACKEND_MARK))).toBe(false);
    checkSearchBackendMark(dir, 'typesense', 'load');
    expect(fs.readFileSync(path.join(dir, SEARCH_BACKEND_MARK), 'utf8')).toBe('typesense\n');
    checkSearchBackendMark(dir, 'typesense', 'load');
    checkSearchBackendMark(dir, 'typesense', 'serve');
  });

  it.each([
    ['load', /refusing loading into it/],
    ['serve', /refusing searching them/],
    ['drop', /refusing dropping from it/],
  ] as const)('refuses to %s with the other backend, saying what to set', (use, verb) => {
    const dir = fresh();
    checkSearchBackendMark(dir, 'typesense', 'load');
    let thrown: unknown;
    try {
      checkSearchBackendMark(dir, 'embedded', use);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toMatchObject({ code: 'CONFLICT' });
    const message = (thrown as Error).message;
    expect(message).toMatch(verb);
    expect(message).toContain('loaded into the typesense search backend');
    expect(message).toContain('QUARRY_SEARCH_BACKEND=embedded');
    expect(message).toContain('Set QUARRY_SEARCH_BACKEND=typesense');
    expect(fs.readFileSync(path.join(dir, SEARCH_BACKEND_MARK), 'utf8')).toBe('typesense\n');
  });
});
