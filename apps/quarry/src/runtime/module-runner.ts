import type { Logger } from '@quarry/logger';
import { readyStep } from '@quarry/runtime';

/** What a started module hands back: how to stop it, and how to tell it can serve (its stores answer). */
export interface StartedModule {
  stop(): Promise<void>;
  ready?(): Promise<void>;
  /** Rejects when the module cannot work again without a restart (liveness). */
  live?(): Promise<void>;
}

/**
 * One entry of a module map (Mimir's `-target` modules): what must run first, and how to start. A
 * module publishes what it provides on the shared context `C` for the modules that depend on it.
 */
export interface ModuleSpec<C> {
  deps?: readonly string[];
  start(ctx: C): Promise<StartedModule>;
}

export type ModuleMap<C> = Record<string, ModuleSpec<C>>;

/**
 * The wanted modules and everything they depend on, each after its dependencies, in a stable order
 * (the map's own order breaks ties). An unknown name or a cycle is a programming error: thrown.
 */
export function startOrder<C>(wanted: Iterable<string>, map: ModuleMap<C>): string[] {
  const order: string[] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (name: string, path: readonly string[]) => {
    const spec = map[name];
    if (!spec) throw new Error(`unknown module "${name}"${path.length ? ` (needed by ${path[path.length - 1]})` : ''}`);
    if (state.get(name) === 'done') return;
    if (state.get(name) === 'visiting') throw new Error(`module dependency cycle: ${[...path, name].join(' -> ')}`);
    state.set(name, 'visiting');
    for (const dep of spec.deps ?? []) visit(dep, [...path, name]);
    state.set(name, 'done');
    order.push(name);
  };
  const want = new Set(wanted);
  for (const name of Object.keys(map)) if (want.has(name)) visit(name, []);
  for (const name of want) visit(name, []);
  return order;
}

/**
 * Modules started in dependency order and stopped in reverse, by one path: a failed start stops what
 * had started, and a module that fails to stop is logged and does not keep the others running.
 */
export class ModuleRunner {
  private constructor(
    private readonly started: Array<{ name: string; module: StartedModule }>,
    private readonly log: Logger,
  ) {}

  static async start<C>(wanted: Iterable<string>, map: ModuleMap<C>, ctx: C, log: Logger): Promise<ModuleRunner> {
    const runner = new ModuleRunner([], log);
    for (const name of startOrder(wanted, map)) {
      try {
        runner.started.push({ name, module: await map[name].start(ctx) });
      } catch (err) {
        await runner.stop();
        throw err;
      }
    }
    return runner;
  }

  get names(): string[] {
    return this.started.map((s) => s.name);
  }

  /** Rejects with the first module that cannot serve. */
  async ready(): Promise<void> {
    for (const { name, module } of this.started)
      if (module.ready) await readyStep(`the ${name.replace(/-/g, ' ')} module`, () => module.ready!());
  }

  /** Rejects with the first module that needs a restart. */
  async live(): Promise<void> {
    for (const { module } of this.started) await module.live?.();
  }

  async stop(): Promise<void> {
    for (const { name, module } of this.started.splice(0).reverse()) {
      const began = Date.now();
      try {
        await module.stop();
        // Which module a slow stop waited on, for whoever reads a shutdown that took long.
        this.log.info({ module: name, ms: Date.now() - began }, 'module stopped');
      } catch (err) {
        this.log.error({ err, module: name }, 'module did not stop cleanly');
      }
    }
  }
}
