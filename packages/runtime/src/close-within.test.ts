import { EventEmitter } from 'node:events';
import { closeBullmq, closeBullmqWorker, closeWithin, lostAfterReady } from './close-within';

describe('closeWithin', () => {
  it('settles as soon as the close does', async () => {
    const began = Date.now();
    await closeWithin(new Promise((r) => setTimeout(r, 20)), 30_000);
    // A bound well short of the 30 s wait, not a target: a loaded machine can hold a 20 ms close a while.
    expect(Date.now() - began).toBeLessThan(10_000);
  });

  it('settles after the wait when the close never does (a Redis that is gone)', async () => {
    const began = Date.now();
    await closeWithin(new Promise(() => undefined), 100);
    expect(Date.now() - began).toBeGreaterThanOrEqual(95);
  });

  it('a failed close is no error, and nothing closing is nothing to wait for', async () => {
    await expect(closeWithin(Promise.reject(new Error('connection closed')), 1000)).resolves.toBeUndefined();
    await expect(closeWithin(undefined, 1000)).resolves.toBeUndefined();
  });
});

describe('closeBullmq', () => {
  /** A BullMQ object as closeBullmq sees it: its close drops every listener of its connections, as BullMQ's does. */
  const bullmqLike = () => {
    const connection = new EventEmitter();
    const blockingConnection = new EventEmitter();
    connection.on('error', () => undefined);
    blockingConnection.on('error', () => undefined);
    const close = async () => {
      connection.removeAllListeners();
      blockingConnection.removeAllListeners();
    };
    return { connection, blockingConnection, close };
  };

  it("a connection's error after its close is heard, not thrown (the failed init of a connection closed while it reconnected)", async () => {
    const worker = bullmqLike();
    await closeBullmq(worker, worker.close(), 1000);
    expect(() => worker.connection.emit('error', new Error('write EPIPE'))).not.toThrow();
    expect(() => worker.blockingConnection.emit('error', new Error('write EPIPE'))).not.toThrow();
    // Without closeBullmq the same event ends the process (an 'error' with no listener throws).
    const bare = bullmqLike();
    await closeWithin(bare.close(), 1000);
    expect(() => bare.connection.emit('error', new Error('write EPIPE'))).toThrow('write EPIPE');
  });

  it('also after a close that outlasted its wait, once it settles; a failed close too', async () => {
    const slow = bullmqLike();
    let finish: () => void = () => undefined;
    const closing = new Promise<void>((resolve) => (finish = resolve)).then(() => slow.close());
    await closeBullmq(slow, closing, 10);
    finish();
    await closing;
    expect(() => slow.connection.emit('error', new Error('late'))).not.toThrow();
    const failed = bullmqLike();
    await closeBullmq(
      failed,
      failed.close().then(() => Promise.reject(new Error('Connection is closed'))),
      1000,
    );
    expect(() => failed.connection.emit('error', new Error('late'))).not.toThrow();
  });

  it('nothing to close is nothing to do', async () => {
    await expect(closeBullmq(undefined, undefined, 1000)).resolves.toBeUndefined();
  });
});

describe('closeBullmqWorker', () => {
  const worker = () => {
    const calls: string[] = [];
    return {
      calls,
      waitUntilReady: async () => void calls.push('ready'),
      close: async (force?: boolean) => void calls.push(`close ${force === true}`),
    };
  };

  it('with its Redis up: finishes connecting, then closes gracefully (or by force when asked)', async () => {
    const w = worker();
    await closeBullmqWorker(w, { lost: false, graceMs: 1000, goneMs: 1000 });
    expect(w.calls).toEqual(['ready', 'close false']);
    const forced = worker();
    await closeBullmqWorker(forced, { lost: false, force: true, graceMs: 1000, goneMs: 1000 });
    expect(forced.calls).toEqual(['ready', 'close true']);
  });

  it('with its Redis lost: closes by force at once, without waiting to connect', async () => {
    const w = worker();
    await closeBullmqWorker(w, { lost: true, graceMs: 1000, goneMs: 1000 });
    expect(w.calls).toEqual(['close true']);
    await expect(closeBullmqWorker(undefined, { lost: true, graceMs: 1, goneMs: 1 })).resolves.toBeUndefined();
  });
});

describe('lostAfterReady', () => {
  const client = (status: string) => Object.assign(new EventEmitter(), { status });

  it('a client still connecting at start-up has lost nothing', () => {
    const c = client('connecting');
    const lost = lostAfterReady(c);
    expect(lost()).toBe(false);
    c.status = 'reconnecting';
    expect(lost()).toBe(false);
  });

  it('a client that was ready and is not any more has lost its server; ready again, it has not', () => {
    const c = client('connecting');
    const lost = lostAfterReady(c);
    c.status = 'ready';
    c.emit('ready');
    expect(lost()).toBe(false);
    c.status = 'reconnecting';
    expect(lost()).toBe(true);
    c.status = 'ready';
    expect(lost()).toBe(false);
    expect(lostAfterReady(client('ready'))()).toBe(false);
  });
});
