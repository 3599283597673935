import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const root = path.resolve(__dirname, '../../..');

describe('the client types', () => {
  // The generator runs as Node runs it (prettier does not load inside jest), on the built contract.
  it('are what the contract generates today (run `npm run gen:client` after changing the contract)', () => {
    const fresh = execFileSync(process.execPath, [path.join(root, 'scripts/gen-client-types.js'), '--stdout'], {
      cwd: root,
      encoding: 'utf8',
    });
    expect(fs.readFileSync(path.join(root, 'packages/client/src/contract-types.generated.ts'), 'utf8')).toBe(fresh);
  });
});
