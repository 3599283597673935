import IORedis from 'ioredis';
import { freePort } from '@quarry/runtime';
import { TestRedis } from '../../../../tests/support/redis';
import { RedisIdempotencyStore } from './redis-idempotency-store.adapter';

describe('RedisIdempotencyStore on a real redis-server', () => {
  let server: TestRedis;
  let redis: IORedis;
  let store: RedisIdempotencyStore;

  beforeAll(async () => {
    server = new TestRedis(await freePort());
    await server.start();
    redis = new IORedis(server.url);
    store = new RedisIdempotencyStore(redis, 'test:idem');
  });
  afterAll(async () => {
    redis?.disconnect();
    await server?.stop();
  });
  beforeEach(() => redis.flushall());

  it('lets one of many racing claims (as many gateways would) take a key, the others see it running', async () => {
    // Two connections: as two gateway replicas on one Redis.
    const second = new IORedis(server.url);
    const other = new RedisIdempotencyStore(second, 'test:idem');
    const claims = await Promise.all(
      Array.from({ length: 20 }, (_, i) => (i % 2 ? store : other).claim('k', 'fp', 60_000)),
    );
    expect(claims.filter((c) => c.state === 'claimed')).toHaveLength(1);
    expect(claims.filter((c) => c.state === 'running')).toHaveLength(19);
    expect(await store.claim('k', 'other', 60_000)).toEqual({ state: 'mismatch' });
    await other.complete('k', 'fp', '{"result":1}', 60_000);
    expect(await store.claim('k', 'fp', 60_000)).toEqual({ state: 'done', answer: '{"result":1}' });
    expect(await redis.pttl('test:idem:k')).toBeGreaterThan(50_000);
    second.disconnect();
  });

  it('releases a running key only under its fingerprint, never a kept answer, and forgets keys at their ttl', async () => {
    await store.claim('r', 'fp', 60_000);
    await store.release('r', 'another');
    expect(await store.claim('r', 'fp', 60_000)).toEqual({ state: 'running' });
    await store.release('r', 'fp');
    expect(await store.claim('r', 'fp', 60_000)).toEqual({ state: 'claimed' });
    await store.complete('r', 'fp', 'answer', 60_000);
    await store.release('r', 'fp');
    expect(await store.claim('r', 'fp', 60_000)).toEqual({ state: 'done', answer: 'answer' });
    await store.claim('short', 'fp', 1);
    // Redis drops it at its ttl (the event is the key's absence, asked until it is gone).
    while ((await redis.exists('test:idem:short')) === 1) await new Promise((r) => setImmediate(r));
    expect(await store.claim('short', 'fp', 60_000)).toEqual({ state: 'claimed' });
  });

  it('says 503 when Redis cannot be reached, never a 500', async () => {
    const away = new IORedis({
      port: await freePort(),
      maxRetriesPerRequest: 0,
      enableOfflineQueue: false,
      lazyConnect: true,
    });
    const down = new RedisIdempotencyStore(away, 'test:idem');
    await expect(down.claim('k', 'fp', 1000)).rejects.toMatchObject({
      code: 'UNAVAILABLE',
      detail: expect.stringMatching(/cannot be reached now/),
    });
    away.disconnect();
  });
});
