import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { makeDataDir, REPO_ROOT, startQuarry, type RunningQuarry } from './quarry-process';

const run = promisify(execFile);

/** What `npm start` serves: its data, its demo user's token, and the address its banner prints. */
export interface DemoStack {
  quarry: RunningQuarry;
  dataDir: string;
  /** `QUARRY_URL` as the banner prints it: the server's base address. */
  url: string;
  /** `QUARRY_TOKEN`: a token of the user demo with the scopes start.sh gives it. */
  token: string;
}

/**
 * Loads exactly what `npm start` loads by running the script it runs (scripts/sample-data.sh: movies and
 * airports from vega-datasets, the user demo, a fresh token), then starts the real built server on it.
 */
export async function startDemoStack(env: Record<string, string> = {}): Promise<DemoStack> {
  const dataDir = makeDataDir('quarry-demo-');
  const { stdout } = await run('bash', [path.join(REPO_ROOT, 'scripts', 'sample-data.sh')], {
    env: { ...process.env, QUARRY_DATA_DIR: dataDir },
    maxBuffer: 16 * 1024 * 1024,
  });
  const token = stdout.trim().split('\n').at(-1) ?? '';
  if (!/^qk_\w+$/.test(token)) throw new Error(`scripts/sample-data.sh printed no token: ${stdout}`);
  const quarry = await startQuarry({ topology: 'all', dataDir, env });
  return { quarry, dataDir, url: quarry.baseUrl, token };
}

/**
 * The suite's demo stack, started before its tests and stopped after them; `env`, read when it starts
 * (after the suite's earlier beforeAll), adds to the server's environment what the operator would configure.
 */
export function useDemoStack(env?: () => Record<string, string>): () => DemoStack {
  let stack: DemoStack | undefined;
  beforeAll(async () => {
    stack = await startDemoStack(env?.());
  }, 180000);
  afterAll(async () => {
    await stack?.quarry.stop();
  });
  return () => {
    if (!stack) throw new Error('the demo stack did not start');
    return stack;
  };
}
