import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CHDB_INSTALL, loadChdb } from './chdb-runner';

describe('loadChdb', () => {
  it('without chDB installed, fails at start with the one command that installs it', () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'q-no-chdb-'));
    try {
      expect(() => loadChdb(root)).toThrow(CHDB_INSTALL);
      expect(CHDB_INSTALL).toBe('npm install --prefix .engines/chdb --no-save chdb@3.4.0');
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});
