import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { createIdentity, type Identity } from './identities';
import { runCli } from './quarry-process';
import { startStackWithData, type Stack } from './stack';

type Values = Array<number | null>;

/** A fixed pseudo-random sequence in [0, 1) from `seed`: the same records every run. */
export function seededRandom(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state / 2147483648;
  };
}

/** Two numbers equal within a relative 1e-9 (sums of doubles in another order), or both missing. */
export const close = (a: number | null | undefined, b: number | null | undefined) =>
  a === null || b === null || a === undefined || b === undefined
    ? (a ?? null) === (b ?? null)
    : Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b));

/** Every value close to its expected one; `where` names the cell in the failure. */
export const expectClose = (got: Values, want: Values, where: string) =>
  expect({ where, got, ok: got.length === want.length && got.every((g, i) => close(g, want[i])) }).toMatchObject({
    where,
    ok: true,
  });

/**
 * A stack with one index loaded (through the CLI) from `records` written as JSON, and the same records
 * in table `t` of an in-memory DuckDB, made by `table` from the file's path: the answers are checked
 * against SQL written in the test, never against Quarry's own code. An analyst may read every index.
 */
export function useIndexedRecords(o: {
  index: string;
  records: () => Array<Record<string, unknown>>;
  table: (file: string) => string;
}) {
  let stack: Stack;
  let analyst: Identity;
  let tmp: string;
  let duck: DuckDBInstance;
  const sql = async (text: string) =>
    (await (await duck.connect()).runAndReadAll(text)).getRowObjectsJS() as Array<Record<string, unknown>>;

  beforeAll(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), `quarry-${o.index}-`));
    const file = path.join(tmp, `${o.index}.json`);
    fs.writeFileSync(file, JSON.stringify(o.records()));
    duck = await DuckDBInstance.create(':memory:');
    await sql(o.table(file));
    stack = await startStackWithData({
      extra: async (env) => {
        const r = await runCli(['index', 'load', o.index, file], env);
        if (r.code !== 0) throw new Error(r.stderr);
      },
    });
    analyst = await createIdentity(stack.dataDir, 'analyst', { indexes: '*' });
  }, 180_000);

  afterAll(async () => {
    if (process.env.QUARRY_PRINT_ERRORS)
      console.log(
        stack?.quarry
          .logs()
          .filter((l) => /error|Error/.test(l))
          .join('\n'),
      );
    await stack?.quarry.stop();
    duck?.closeSync();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  const call = <T>(method: string, params: unknown) => stack.call<T>(analyst, method, params);
  /** CROSSTAB.EXECUTE on the index without the cache; throws with the error when it fails. */
  async function crosstab<T>(params: Record<string, unknown>): Promise<T> {
    const res = await call<{ data: T }>('CROSSTAB.EXECUTE', { index: o.index, cache: false, ...params });
    if (!res.data) throw new Error(`CROSSTAB.EXECUTE failed: ${JSON.stringify(res.error)}`);
    return res.data.data;
  }
  return { sql, call, crosstab };
}
