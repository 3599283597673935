import IORedis from 'ioredis';
import { startPrivateRedis } from './private-redis';

describe('startPrivateRedis', () => {
  it('serves on loopback until stopped', async () => {
    const redis = await startPrivateRedis('redis-server');
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

  it('names the missing binary and the way out', async () => {
    await expect(startPrivateRedis('/nonexistent/redis-server')).rejects.toThrow(
      'cannot start /nonexistent/redis-server: not found (install redis-server or set REDIS_URL)',
    );
  });
});
