import { EventEmitter } from 'node:events';
import { closeWithin, lostAfterReady } from './close-within';

describe('closeWithin', () => {
  it('settles as soon as the close does', async () => {
    const began = Date.now();
    await closeWithin(new Promise((r) => setTimeout(r, 20)), 5000);
    expect(Date.now() - began).toBeLessThan(2000);
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
