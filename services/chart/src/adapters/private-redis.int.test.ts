import net from 'node:net';
import fs from 'node:fs';
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

  it('refuses a client without its password, and keeps the password off its command line', async () => {
    const redis = await startPrivateRedis('redis-server', { maxmemory: '256mb' });
    const password = new URL(redis.url).password;
    expect(password).toMatch(/^[0-9a-f]{64}$/);
    // A bare client speaking RESP inline commands: what any local process could do.
    const ask = (commands: string) =>
      new Promise<string>((resolve, reject) => {
        const socket = net.connect(redis.port, '127.0.0.1');
        let out = '';
        socket.on('data', (d) => (out += d.toString()));
        socket.on('error', reject);
        socket.on('end', () => resolve(out));
        socket.end(commands);
      });
    try {
      const replies = await ask(`GET k\r\nKEYS *\r\nAUTH ${'0'.repeat(64)}\r\nGET k\r\nAUTH ${password}\r\nPING\r\n`);
      expect(replies.split('\r\n').slice(0, 5)).toEqual([
        expect.stringMatching(/^-NOAUTH/),
        expect.stringMatching(/^-NOAUTH/),
        expect.stringMatching(/^-WRONGPASS/),
        expect.stringMatching(/^-NOAUTH/),
        '+OK',
      ]);
      expect(replies).toContain('+PONG');
      // Any local user can read a process's command line: the password is not there.
      const pids = fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p));
      const lines = pids.map((p) => {
        try {
          return fs.readFileSync(`/proc/${p}/cmdline`, 'utf8');
        } catch {
          return '';
        }
      });
      expect(lines.some((l) => l.includes(`${redis.port}`) && l.includes('redis-server'))).toBe(true);
      expect(lines.filter((l) => l.includes(password))).toEqual([]);
    } finally {
      await redis.stop();
    }
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
