import { closeWithin } from './close-within';

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
