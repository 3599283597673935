import { QuarryMetrics } from '@quarry/metrics';
import { SharedComputations } from './shared-computations';

/** A computation that runs until released (or aborted), counting its runs and its signal's fate. */
function gated<T>(value: T) {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const runs: AbortSignal[] = [];
  return {
    runs,
    release,
    compute: async (signal: AbortSignal) => {
      runs.push(signal);
      await Promise.race([
        gate,
        new Promise((_r, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true })),
      ]);
      return value;
    },
  };
}

async function counts(metrics: QuarryMetrics, kind: string) {
  const computations = await metrics.computations.get();
  const inFlight = await metrics.computationsInFlight.get();
  const of = (outcome: string) =>
    computations.values.find((v) => v.labels.kind === kind && v.labels.outcome === outcome)?.value ?? 0;
  return {
    computed: of('computed'),
    joined: of('joined'),
    cancelled: of('cancelled'),
    inFlight: inFlight.values.find((v) => v.labels.kind === kind)?.value ?? 0,
  };
}

describe('SharedComputations', () => {
  it('computes identical calls in flight once and gives every caller the answer', async () => {
    const metrics = new QuarryMetrics();
    const shared = new SharedComputations('crosstab', metrics);
    const g = gated({ cells: 42 });
    const callers = Array.from({ length: 8 }, () => shared.run(['crosstab', 'flights', 3, 'q'], undefined, g.compute));
    expect(shared.size).toBe(1);
    expect(await counts(metrics, 'crosstab')).toEqual({ computed: 1, joined: 7, cancelled: 0, inFlight: 1 });
    g.release();
    const answers = await Promise.all(callers);
    expect(answers.every((a) => a === answers[0])).toBe(true);
    expect(g.runs).toHaveLength(1);
    expect([shared.size, (await counts(metrics, 'crosstab')).inFlight]).toEqual([0, 0]);
  });

  it('computes calls whose keys differ in any part apart, and a later identical call anew', async () => {
    const shared = new SharedComputations('search');
    const g = gated('page');
    const a = shared.run(['query', 'movies', 1, 'realm:a'], undefined, g.compute);
    const b = shared.run(['query', 'movies', 1, 'realm:b'], undefined, g.compute);
    const c = shared.run(['query', 'movies', 2, 'realm:a'], undefined, g.compute);
    expect(g.runs).toHaveLength(3);
    g.release();
    await Promise.all([a, b, c]);
    await shared.run(['query', 'movies', 1, 'realm:a'], undefined, g.compute);
    expect(g.runs).toHaveLength(4);
  });

  it('gives every waiting caller the error of the one computation', async () => {
    const shared = new SharedComputations('crosstab');
    let fail!: (err: Error) => void;
    const compute = () => new Promise<never>((_r, reject) => (fail = reject));
    const callers = [1, 2, 3].map(() => shared.run(['k'], undefined, compute));
    fail(new Error('the table would have 200,000 cells'));
    for (const c of callers) await expect(c).rejects.toThrow('the table would have 200,000 cells');
    expect(shared.size).toBe(0);
  });

  it('a caller who gives up leaves; the computation goes on for those still waiting', async () => {
    const metrics = new QuarryMetrics();
    const shared = new SharedComputations('crosstab', metrics);
    const g = gated('table');
    const leaving = new AbortController();
    const staying = new AbortController();
    const first = shared.run(['k'], leaving.signal, g.compute);
    const second = shared.run(['k'], staying.signal, g.compute);
    leaving.abort(new Error('gone'));
    await expect(first).rejects.toThrow('gone');
    expect(g.runs[0]!.aborted).toBe(false);
    g.release();
    await expect(second).resolves.toBe('table');
    expect((await counts(metrics, 'crosstab')).cancelled).toBe(0);
  });

  it('cancels the computation once every caller has given up, and forgets it', async () => {
    const metrics = new QuarryMetrics();
    const shared = new SharedComputations('crosstab', metrics);
    const g = gated('never seen');
    const callers = [new AbortController(), new AbortController()];
    const waits = callers.map((c) => shared.run(['k'], c.signal, g.compute));
    callers[0]!.abort(new Error('first gone'));
    expect(g.runs[0]!.aborted).toBe(false);
    callers[1]!.abort(new Error('second gone'));
    expect(g.runs[0]!.aborted).toBe(true);
    await expect(waits[0]).rejects.toThrow('first gone');
    await expect(waits[1]).rejects.toThrow('second gone');
    await new Promise((r) => setImmediate(r));
    expect(shared.size).toBe(0);
    expect(await counts(metrics, 'crosstab')).toMatchObject({ computed: 1, joined: 1, cancelled: 1, inFlight: 0 });
    // A caller who never had a signal keeps it alive however many others leave.
    const g2 = gated('kept');
    const quitter = new AbortController();
    const q = shared.run(['k2'], quitter.signal, g2.compute);
    const patient = shared.run(['k2'], undefined, g2.compute);
    quitter.abort(new Error('bye'));
    await expect(q).rejects.toThrow('bye');
    expect(g2.runs[0]!.aborted).toBe(false);
    g2.release();
    await expect(patient).resolves.toBe('kept');
  });

  it('refuses at once a caller whose signal has already aborted, computing nothing', async () => {
    const shared = new SharedComputations('search');
    const g = gated('x');
    const gone = new AbortController();
    gone.abort(new Error('already gone'));
    await expect(shared.run(['k'], gone.signal, g.compute)).rejects.toThrow('already gone');
    expect([g.runs.length, shared.size]).toEqual([0, 0]);
  });
});
