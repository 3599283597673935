import { createRootLogger } from '@quarry/logger';
import { ModuleRunner, startOrder, type ModuleMap } from './module-runner';

const silent = createRootLogger('silent');

/** A map whose modules record their starts and stops in one list; `failing` throws on start. */
function recordingMap(specs: Record<string, readonly string[]>, failing?: string, stopFailing?: string) {
  const events: string[] = [];
  const map: ModuleMap<{ provided: string[] }> = {};
  for (const [name, deps] of Object.entries(specs)) {
    map[name] = {
      deps,
      start: async (ctx) => {
        if (name === failing) throw new Error(`${name} cannot start`);
        events.push(`start ${name}`);
        ctx.provided.push(name);
        return {
          stop: async () => {
            events.push(`stop ${name}`);
            if (name === stopFailing) throw new Error(`${name} cannot stop`);
          },
          ready: async () => {
            events.push(`ready ${name}`);
          },
        };
      },
    };
  }
  return { map, events };
}

describe('startOrder', () => {
  it('starts dependencies first, each once, in the map order where free', () => {
    const { map } = recordingMap({
      redis: [],
      store: [],
      query: ['store'],
      chart: ['redis'],
      gateway: ['query', 'chart'],
    });
    expect(startOrder(['gateway'], map)).toEqual(['store', 'query', 'redis', 'chart', 'gateway']);
    expect(startOrder(['chart', 'query'], map)).toEqual(['store', 'query', 'redis', 'chart']);
  });

  it('names an unknown module and who needs it, and a cycle with its path', () => {
    expect(() => startOrder(['x'], recordingMap({ a: [] }).map)).toThrow('unknown module "x"');
    expect(() => startOrder(['a'], recordingMap({ a: ['nope'] }).map)).toThrow('unknown module "nope" (needed by a)');
    expect(() => startOrder(['a'], recordingMap({ a: ['b'], b: ['a'] }).map)).toThrow(
      'module dependency cycle: a -> b -> a',
    );
  });
});

describe('ModuleRunner', () => {
  it('starts in order, reports readiness in order, and stops in reverse', async () => {
    const { map, events } = recordingMap({ store: [], query: ['store'], gateway: ['query'] });
    const ctx = { provided: [] as string[] };
    const runner = await ModuleRunner.start(['gateway'], map, ctx, silent);
    expect(ctx.provided).toEqual(['store', 'query', 'gateway']);
    await runner.ready();
    await runner.stop();
    expect(events).toEqual([
      'start store',
      'start query',
      'start gateway',
      'ready store',
      'ready query',
      'ready gateway',
      'stop gateway',
      'stop query',
      'stop store',
    ]);
    // A second stop has nothing left to stop.
    await runner.stop();
    expect(events.filter((e) => e.startsWith('stop'))).toHaveLength(3);
  });

  it('stops what had started when a later module fails, and rethrows', async () => {
    const { map, events } = recordingMap({ store: [], engine: [], query: ['store', 'engine'] }, 'query');
    await expect(ModuleRunner.start(['query'], map, { provided: [] }, silent)).rejects.toThrow('query cannot start');
    expect(events).toEqual(['start store', 'start engine', 'stop engine', 'stop store']);
  });

  it('keeps stopping the others when one fails to stop', async () => {
    const { map, events } = recordingMap({ a: [], b: ['a'], c: ['b'] }, undefined, 'b');
    const runner = await ModuleRunner.start(['c'], map, { provided: [] }, silent);
    await runner.stop();
    expect(events.filter((e) => e.startsWith('stop'))).toEqual(['stop c', 'stop b', 'stop a']);
  });
});
