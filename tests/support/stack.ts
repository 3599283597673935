import fs from 'node:fs';
import os from 'node:os';
import { QuarryClient, QuarryError, type MethodName, type ParamsOf } from '@quarry/client';
import path from 'node:path';
import { createIdentity, type Identity } from './identities';
import { rpcClient, type RawResponse, type RpcClient } from './http';
import { makeDataDir, runCli, startQuarry, type RunningQuarry, type Topology } from './quarry-process';
import { VEGA } from './datasets';

export interface RpcResult<T> {
  data?: T;
  error?: { code: number; message: string; data: { detail: string } };
}

export function unwrap<T>(res: RawResponse): RpcResult<T> {
  const body = res.json as { result?: { data: T }; error?: RpcResult<T>['error'] };
  return { data: body.result?.data, error: body.error };
}

/**
 * Calls through the typed client (@quarry/client), as an integrator would; protocol tests use raw HTTP.
 * The address is asked for at each call, so a suite that restarts its server keeps one helper.
 */
export function typedCall(baseUrl: () => string) {
  return async <T>(identity: Identity, method: string, params: unknown): Promise<RpcResult<T>> => {
    try {
      const { data } = await new QuarryClient({ url: baseUrl(), token: identity.token }).call(
        method as MethodName,
        params as ParamsOf<MethodName>,
      );
      return { data: data as T };
    } catch (err) {
      if (!(err instanceof QuarryError) || typeof err.code !== 'number') throw err;
      return { error: { code: err.code, message: err.title, data: { detail: err.detail } } };
    }
  };
}

export interface Stack {
  quarry: RunningQuarry;
  dataDir: string;
  env: Record<string, string>;
  client(identity: Identity): RpcClient;
  call<T>(identity: Identity, method: string, params: unknown): Promise<RpcResult<T>>;
  /** The call's result; an error answer throws, naming the method, its code and detail. */
  data<T>(identity: Identity, method: string, params: unknown): Promise<T>;
  cli(args: string[]): ReturnType<typeof runCli>;
}

/** The vega sample indexes as the real CLI loads them, each suite's own stack starting from a copy. */
const SAMPLE_LOADS = [
  [
    'index',
    'load',
    'movies',
    path.join(VEGA, 'movies.json'),
    '--view',
    'Directors=Director',
    '--view',
    'Distributors=Distributor',
    '--description',
    'Films: grosses, budgets and ratings',
  ],
  [
    'index',
    'load',
    'flights',
    path.join(VEGA, 'flights-20k.json'),
    '--view',
    'Destinations=destination',
    '--description',
    'US flight delays, January to March 2001',
  ],
];

async function loadSamples(env: Record<string, string>): Promise<void> {
  for (const args of SAMPLE_LOADS) {
    const res = await runCli(args, env);
    if (res.code !== 0) throw new Error(`${args.join(' ')} failed (exit ${res.code ?? res.signal}): ${res.stderr}`);
  }
}

/**
 * Every e2e suite starts on the same sample data: it is loaded by the real CLI once per jest run (by the
 * first worker to ask; the others wait for it), and each stack gets a copy of that data directory. The
 * catalog names its files relative to the directory, so a copy is a directory of its own; the server makes
 * its own keys and secrets in it. Loading itself is tested by the suites that call `quarry index load`.
 */
async function copyOfSamples(dataDir: string): Promise<void> {
  const run = process.env.QUARRY_E2E_RUN;
  if (!run) return loadSamples({ QUARRY_DATA_DIR: dataDir });
  const template = path.join(os.tmpdir(), `quarry-e2e-samples-${run}`);
  const failed = `${template}.failed`;
  let mine = false;
  try {
    fs.mkdirSync(`${template}.lock`);
    mine = true;
  } catch {
    // Another worker is loading it.
  }
  if (mine) {
    const building = `${template}.building`;
    try {
      fs.mkdirSync(building);
      await loadSamples({ QUARRY_DATA_DIR: building });
      fs.rmSync(path.join(building, 'tmp'), { recursive: true, force: true });
      fs.renameSync(building, template);
    } catch (err) {
      fs.writeFileSync(failed, String((err as Error).message));
      throw err;
    }
  } else {
    // A hang guard past two CLI loads on a loaded machine, not a target.
    for (const end = Date.now() + 300_000; !fs.existsSync(template);) {
      if (fs.existsSync(failed)) throw new Error(`loading the sample data failed: ${fs.readFileSync(failed, 'utf8')}`);
      if (Date.now() > end) throw new Error(`the sample data was not loaded at ${template} in 300 s`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  fs.cpSync(template, dataDir, { recursive: true });
}

/** Gives the suite a copy of the vega sample indexes (loaded by the real CLI), then starts the real server. */
export async function startStackWithData(
  opts: {
    topology?: Topology;
    env?: Record<string, string>;
    extra?: (env: Record<string, string>) => Promise<void>;
  } = {},
): Promise<Stack> {
  const dataDir = makeDataDir();
  const env = { QUARRY_DATA_DIR: dataDir };
  const cli = (args: string[]) => runCli(args, env);
  await copyOfSamples(dataDir);
  if (opts.extra) await opts.extra(env);
  const quarry = await startQuarry({ topology: opts.topology ?? 'all', dataDir, env: opts.env });
  const call = typedCall(() => quarry.baseUrl);
  return {
    quarry,
    dataDir,
    env,
    cli,
    client: (identity) => rpcClient(quarry.baseUrl, identity.token),
    call,
    data: async <T>(identity: Identity, method: string, params: unknown) => {
      const res = await call<T>(identity, method, params);
      if (res.error) throw new Error(`${method}: ${res.error.code} ${res.error.data.detail}`);
      return res.data as T;
    },
  };
}

export { createIdentity, fs };

/**
 * The common suite set-up: the sample data, a running stack and an analyst who may read every index,
 * started before the suite's tests and stopped after them.
 */
export function useStackWithAnalyst(opts: Parameters<typeof startStackWithData>[0] = {}): {
  stack(): Stack;
  analyst(): Identity;
} {
  let stack: Stack | undefined;
  let analyst: Identity | undefined;
  beforeAll(async () => {
    stack = await startStackWithData(opts);
    analyst = await createIdentity(stack.dataDir, 'analyst', { indexes: '*' });
  }, 120000);
  afterAll(async () => {
    await stack?.quarry.stop();
  });
  const need = <T>(v: T | undefined): T => {
    if (v === undefined) throw new Error('the stack did not start');
    return v;
  };
  return { stack: () => need(stack), analyst: () => need(analyst) };
}
