import fs from 'node:fs';
import { pinLoadedAddons } from './pin-native-addons';

const mapped = (name: string) => fs.readFileSync('/proc/self/maps', 'utf8').includes(name);

describe('pinLoadedAddons', () => {
  it('pins only mapped addons whose path matches, and they keep working', () => {
    // better-sqlite3 is a native addon every test process of this repository can load.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const Database = require('better-sqlite3') as new (file: string) => {
      prepare(sql: string): { get(): unknown };
      close(): void;
    };
    // It maps its addon when the first database opens.
    const first = new Database(':memory:');
    expect(mapped('better_sqlite3.node')).toBe(true);
    expect(pinLoadedAddons(/no-such-addon/)).toEqual([]);
    const pinned = pinLoadedAddons(/better-sqlite3/);
    expect(pinned).toHaveLength(1);
    expect(pinned[0]).toMatch(/better_sqlite3\.node$/);
    const db = new Database(':memory:');
    expect(db.prepare('SELECT 41 + 1 AS n').get()).toEqual({ n: 42 });
    db.close();
    first.close();
  });
});
