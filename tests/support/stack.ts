import fs from 'node:fs';
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

/** Loads the vega sample indexes with the real CLI, then starts the real server. */
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
  for (const args of [
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
  ]) {
    const res = await cli(args);
    if (res.code !== 0) throw new Error(`${args.join(' ')} failed (exit ${res.code ?? res.signal}): ${res.stderr}`);
  }
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
