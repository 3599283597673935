import { ConfigError, loadConfig, serviceAddr, serviceListenAddr, TARGETS } from './index';

describe('loadConfig', () => {
  it('fills defaults from an empty environment', () => {
    const c = loadConfig({});
    expect(c.targets).toEqual([...TARGETS]);
    expect(c.http.port).toBe(8080);
    expect(c.mongo).toBeUndefined();
    expect(c.chart.chromiumPath).toBe('/usr/bin/chromium');
  });

  it('parses a comma list of targets and rejects unknown ones', () => {
    expect(loadConfig({ QUARRY_TARGET: 'gateway, query' }).targets).toEqual(['gateway', 'query']);
    expect(() => loadConfig({ QUARRY_TARGET: 'gateway,bogus' })).toThrow(/unknown target "bogus"/);
  });

  it('lists every problem at once', () => {
    try {
      loadConfig({ PORT: 'abc', REDIS_URL: 'http://x', TYPESENSE_URL: 'http://ts:8108', LOG_LEVEL: 'loud' });
      throw new Error('expected a ConfigError');
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      const problems = (err as ConfigError).problems.join('\n');
      expect(problems).toMatch(/PORT/);
      expect(problems).toMatch(/REDIS_URL/);
      expect(problems).toMatch(/TYPESENSE_API_KEY: is required/);
      expect(problems).toMatch(/LOG_LEVEL/);
    }
  });

  it('treats empty variables as unset', () => {
    expect(loadConfig({ MONGODB_URL: '' }).mongo).toBeUndefined();
  });
});

describe('service addresses', () => {
  it('gives hosted services a free loopback port and split ones their configured port', () => {
    expect(serviceListenAddr(loadConfig({}), 'query')).toBe('127.0.0.1:0');
    const split = loadConfig({ QUARRY_TARGET: 'query', QUARRY_QUERY_ADDR: 'query:6000', QUARRY_GRPC_LISTEN_HOST: '0.0.0.0' });
    expect(serviceListenAddr(split, 'query')).toBe('0.0.0.0:6000');
    expect(serviceAddr(loadConfig({ QUARRY_TARGET: 'gateway' }), 'reports')).toBe('127.0.0.1:50054');
  });
});
