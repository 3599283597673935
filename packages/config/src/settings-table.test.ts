import { envShape, KNOWN_ENV_VARS, SETTING_GROUPS } from './config.schema';
import { settingDoc, settingsTables } from './settings-table';

describe('the settings documentation', () => {
  it('documents every setting, in exactly one group, with who reads it', () => {
    const grouped = SETTING_GROUPS.flatMap((g) => Object.keys(g.shape));
    expect(grouped).toEqual(KNOWN_ENV_VARS);
    expect(new Set(grouped).size).toBe(grouped.length);
    for (const name of KNOWN_ENV_VARS) {
      const doc = settingDoc(name);
      expect({ name, readers: doc.readBy.length > 0 }).toEqual({ name, readers: true });
      // A setting says what it does, or names the row that does.
      expect({ name, documented: doc.doc.length > 0 !== (doc.rowOf !== undefined) }).toEqual({
        name,
        documented: true,
      });
    }
  });

  it('puts each partner in the row of a documented setting of its own group', () => {
    for (const group of SETTING_GROUPS) {
      for (const name of Object.keys(group.shape)) {
        const rowOf = settingDoc(name).rowOf;
        if (rowOf === undefined) continue;
        expect({ name, sameGroup: rowOf in group.shape }).toEqual({ name, sameGroup: true });
        expect({ name, headDocumented: settingDoc(rowOf).doc.length > 0 }).toEqual({ name, headDocumented: true });
      }
    }
  });

  it('names every setting once in the tables, defaults as the rules give them', () => {
    const tables = settingsTables();
    for (const name of Object.keys(envShape)) expect(tables.split(`\`${name}\``).length - 1).toBeGreaterThanOrEqual(1);
    expect(tables).toContain('| `PORT` | `8080` | `gateway` | gateway HTTP port (`0`: any free port) |');
    expect(tables).toContain('| `MONGODB_URL`, `MONGODB_DB` | unset, `quarry` |');
    expect(tables).toContain('| `QUARRY_WEBHOOK_ALLOW` | empty: webhooks refused |');
  });

  it('refuses a setting declared without documentation', () => {
    expect(() => settingDoc('NOT_A_SETTING')).toThrow('NOT_A_SETTING has no documentation');
  });
});
