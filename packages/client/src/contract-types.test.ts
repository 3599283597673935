import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { METHOD_NAMES } from '@quarry/contract';
import { QuarryClient } from './quarry-client';

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

  it('the README lists every method of the contract as the generator writes it', () => {
    const fresh = execFileSync(process.execPath, [path.join(root, 'scripts/gen-client-types.js'), '--readme'], {
      cwd: root,
      encoding: 'utf8',
    });
    expect(fs.readFileSync(path.join(root, 'packages/client/README.md'), 'utf8')).toBe(fresh);
    for (const method of METHOD_NAMES) expect(fresh).toContain(`| ${method} `);
  });

  it('has the call the README names for every method', () => {
    const client = new QuarryClient({ url: 'http://127.0.0.1:9', token: 'qk_none', fetch: () => Promise.reject() });
    for (const method of METHOD_NAMES) {
      const [group, verb] = method.split('.');
      const camel = verb.toLowerCase().replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
      const fn = (client as unknown as Record<string, Record<string, unknown>>)[group.toLowerCase()]?.[camel];
      expect({ method, fn: typeof fn }).toEqual({ method, fn: 'function' });
    }
  });
});
