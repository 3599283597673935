import IORedis from 'ioredis';
import { startPrivateRedis } from './private-redis';

describe('startPrivateRedis', () => {
  it('serves on loopback until stopped', async () => {
    const redis = await startPrivateRedis('redis-server', { maxmemory: '256mb' });
    const client = new IORedis(redis.url, { maxRetriesPerRequest: 0, retryStrategy: () => null, lazyConnect: true });
    client.on('error', () => undefined);
    try {
      await client.connect();
      expect(await client.ping()).toBe('PONG');
    } finally {
      client.disconnect();
      await redis.stop();
    }
    expect(() => process.kill(redis.pid!, 0)).toThrow();
  });

  it('is capped at the configured size and refuses writes when full rather than evicting keys', async () => {
    const redis = await startPrivateRedis('redis-server', { maxmemory: '12mb' });
    const client = new IORedis(redis.url, { maxRetriesPerRequest: 0, retryStrategy: () => null, lazyConnect: true });
    client.on('error', () => undefined);
    try {
      await client.connect();
      expect(await client.config('GET', 'maxmemory')).toEqual(['maxmemory', String(12 * 1024 * 1024)]);
      expect(await client.config('GET', 'maxmemory-policy')).toEqual(['maxmemory-policy', 'noeviction']);
      // Fill it: the write that does not fit is refused, and every key written before survives.
      const chunk = 'x'.repeat(1024 * 1024);
      let written = 0;
      let refusal: unknown;
      for (; written < 40; written++) {
        try {
          await client.set(`k${written}`, chunk);
        } catch (err) {
          refusal = err;
          break;
        }
      }
      expect(String(refusal)).toMatch(/^ReplyError: OOM command not allowed/);
      expect(written).toBeGreaterThan(0);
      expect(await client.dbsize()).toBe(written);
    } finally {
      client.disconnect();
      await redis.stop();
    }
  });

  it('names the missing binary and the way out', async () => {
    await expect(startPrivateRedis('/nonexistent/redis-server', { maxmemory: '256mb' })).rejects.toThrow(
      'cannot start /nonexistent/redis-server: not found (install redis-server or set REDIS_URL)',
    );
  });
});
