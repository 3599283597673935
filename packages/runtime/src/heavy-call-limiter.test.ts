import { HeavyCallLimiter } from './heavy-call-limiter';

const never = () => new AbortController().signal;

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

describe('HeavyCallLimiter', () => {
  it('runs at most maxRunning at once, queues up to maxQueued, and refuses the rest at once with a retry hint', async () => {
    const limiter = new HeavyCallLimiter({ maxRunning: 2, perCaller: 2, maxQueued: 1, retryAfterSeconds: 3 });
    const gates = [deferred(), deferred(), deferred()];
    let concurrent = 0;
    let peak = 0;
    const job = (i: number) =>
      limiter.run('a', never(), async () => {
        concurrent++;
        peak = Math.max(peak, concurrent);
        await gates[i].promise;
        concurrent--;
        return i;
      });
    const first = [job(0), job(1), job(2)];
    expect(limiter.active).toBe(2);
    expect(limiter.queued).toBe(1);
    await expect(limiter.run('a', never(), async () => 'x')).rejects.toMatchObject({
      code: 'UNAVAILABLE',
      retryAfterSeconds: 3,
    });
    gates.forEach((g) => g.resolve());
    expect(await Promise.all(first)).toEqual([0, 1, 2]);
    expect(peak).toBe(2);
    expect(limiter.active).toBe(0);
  });

  it('frees the slot when the work throws', async () => {
    const limiter = new HeavyCallLimiter({ maxRunning: 1, perCaller: 1, maxQueued: 0 });
    await expect(limiter.run('a', never(), async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(limiter.run('a', never(), async () => 'ok')).resolves.toBe('ok');
  });

  it('drops a queued call whose deadline passes, with its reason, and never runs it', async () => {
    const limiter = new HeavyCallLimiter({ maxRunning: 1, perCaller: 1, maxQueued: 5 });
    const gate = deferred();
    const running = limiter.run('a', never(), () => gate.promise);
    const controller = new AbortController();
    let ran = false;
    const queued = limiter.run('a', controller.signal, async () => {
      ran = true;
    });
    controller.abort();
    await expect(queued).rejects.toMatchObject({ code: 'TIMEOUT' });
    expect(limiter.queued).toBe(0);
    gate.resolve();
    await running;
    expect(ran).toBe(false);
    expect(limiter.active).toBe(0);
  });

  it("with one slot, a second caller's call is admitted before the first caller's remaining ones (round robin)", async () => {
    const limiter = new HeavyCallLimiter({ maxRunning: 1, perCaller: 1, maxQueued: 10 });
    const started: string[] = [];
    const gates = new Map<string, ReturnType<typeof deferred>>();
    const job = (caller: string, name: string) => {
      const gate = deferred();
      gates.set(name, gate);
      return limiter.run(caller, never(), async () => {
        started.push(name);
        await gate.promise;
      });
    };
    const all = [job('A', 'a1'), job('A', 'a2'), job('A', 'a3'), job('B', 'b1'), job('C', 'c1'), job('B', 'b2')];
    await new Promise((r) => setImmediate(r));
    expect(started).toEqual(['a1']);
    for (const name of ['a1', 'b1', 'c1', 'a2', 'b2', 'a3']) {
      gates.get(name)!.resolve();
      await new Promise((r) => setImmediate(r));
    }
    await Promise.all(all);
    expect(started).toEqual(['a1', 'b1', 'c1', 'a2', 'b2', 'a3']);
    expect(limiter.active).toBe(0);
    expect(limiter.queued).toBe(0);
  });

  it("runs at most perCaller of one caller at once while another caller's call takes a free slot at once", async () => {
    const limiter = new HeavyCallLimiter({ maxRunning: 4, perCaller: 2, maxQueued: 10 });
    const gate = deferred();
    let runningA = 0;
    let peakA = 0;
    const a = Array.from({ length: 6 }, () =>
      limiter.run('A', never(), async () => {
        runningA++;
        peakA = Math.max(peakA, runningA);
        await gate.promise;
        runningA--;
      }),
    );
    expect(limiter.active).toBe(2);
    expect(limiter.queued).toBe(4);
    // B is not behind A's four waiting calls: a slot is free and B has nothing running.
    await expect(limiter.run('B', never(), async () => 'b')).resolves.toBe('b');
    gate.resolve();
    await Promise.all(a);
    expect(peakA).toBe(2);
  });

  it("refuses a caller beyond the wait bound but never a newcomer's first call, and keeps one caller's calls in order", async () => {
    const limiter = new HeavyCallLimiter({ maxRunning: 1, perCaller: 1, maxQueued: 2 });
    const gate = deferred();
    const order: number[] = [];
    const a = [0, 1, 2].map((i) =>
      limiter.run('A', never(), async () => {
        order.push(i);
        await gate.promise;
      }),
    );
    await expect(limiter.run('A', never(), async () => 'x')).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    const b = limiter.run('B', never(), async () => 'b');
    expect(limiter.queued).toBe(3);
    await expect(limiter.run('B', never(), async () => 'x')).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    gate.resolve();
    await Promise.all([...a, b]);
    expect(order).toEqual([0, 1, 2]);
  });
});
