import { HeavyCallLimiter } from './heavy-call-limiter';

const never = () => new AbortController().signal;

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

describe('HeavyCallLimiter', () => {
  it('runs at most maxRunning at once, queues up to maxQueued, and refuses the rest at once with a retry hint', async () => {
    const limiter = new HeavyCallLimiter(2, 1, 3);
    const gates = [deferred(), deferred(), deferred()];
    let concurrent = 0;
    let peak = 0;
    const job = (i: number) =>
      limiter.run(never(), async () => {
        concurrent++;
        peak = Math.max(peak, concurrent);
        await gates[i].promise;
        concurrent--;
        return i;
      });
    const first = [job(0), job(1), job(2)];
    expect(limiter.active).toBe(2);
    expect(limiter.queued).toBe(1);
    await expect(limiter.run(never(), async () => 'x')).rejects.toMatchObject({
      code: 'UNAVAILABLE',
      retryAfterSeconds: 3,
    });
    gates.forEach((g) => g.resolve());
    expect(await Promise.all(first)).toEqual([0, 1, 2]);
    expect(peak).toBe(2);
    expect(limiter.active).toBe(0);
  });

  it('frees the slot when the work throws', async () => {
    const limiter = new HeavyCallLimiter(1, 0);
    await expect(limiter.run(never(), async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(limiter.run(never(), async () => 'ok')).resolves.toBe('ok');
  });

  it('drops a queued call whose deadline passes, with its reason, and never runs it', async () => {
    const limiter = new HeavyCallLimiter(1, 5);
    const gate = deferred();
    const running = limiter.run(never(), () => gate.promise);
    const controller = new AbortController();
    let ran = false;
    const queued = limiter.run(controller.signal, async () => {
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
});
