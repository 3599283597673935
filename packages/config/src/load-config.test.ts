import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { makeTlsFixtures } from '@quarry/testkit';
import { loadGrpcTls } from './config-files';
import { ConfigError, loadConfig, serviceAddr, serviceListenAddr, TARGETS } from './index';

describe('loadConfig', () => {
  it('fills defaults from an empty environment', () => {
    const c = loadConfig({});
    expect(c.targets).toEqual([...TARGETS]);
    expect(c.http.port).toBe(8080);
    // Loopback unless asked, for the API and the ops port alike: binding every interface is a choice.
    expect(c.http.host).toBe('127.0.0.1');
    expect(c.opsHost).toBe('127.0.0.1');
    expect(c.http.corsOrigins).toEqual([]);
    expect(c.http.bodyTimeoutMs).toBe(10_000);
    expect(c.rateLimit).toBeUndefined();
    expect(c.auditDays).toBe(90);
    expect(c.mongo).toBeUndefined();
    expect(c.chart.chromiumPath).toBe('/usr/bin/chromium');
  });

  it('keeps deleted reports 30 days and 1024 MiB of snapshots for saved reports unless told otherwise', () => {
    expect(loadConfig({})).toMatchObject({ reportTrashDays: 30, snapshotKeepBytes: 1024 * 1024 * 1024 });
    expect(loadConfig({ QUARRY_REPORT_TRASH_DAYS: '7', QUARRY_SNAPSHOT_KEEP_MB: '0.5' })).toMatchObject({
      reportTrashDays: 7,
      snapshotKeepBytes: 524288,
    });
    expect(loadConfig({ QUARRY_SNAPSHOT_KEEP_MB: '0' }).snapshotKeepBytes).toBe(0);
    for (const [name, value] of [
      ['QUARRY_REPORT_TRASH_DAYS', '-1'],
      ['QUARRY_REPORT_TRASH_DAYS', 'a month'],
      ['QUARRY_SNAPSHOT_KEEP_MB', '-5'],
      ['QUARRY_SNAPSHOT_KEEP_MB', 'lots'],
    ])
      expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(name));
  });

  it('parses a comma list of targets and rejects unknown ones', () => {
    expect(loadConfig({ QUARRY_TARGET: 'gateway, query', QUARRY_INTERNAL_TOKEN: 'k'.repeat(32) }).targets).toEqual([
      'gateway',
      'query',
    ]);
    expect(() => loadConfig({ QUARRY_TARGET: 'gateway,bogus' })).toThrow(/unknown target "bogus"/);
  });

  it('lists every problem at once', () => {
    try {
      loadConfig({
        PORT: 'abc',
        REDIS_URL: 'http://x',
        QUARRY_SEARCH_BACKEND: 'typesense',
        TYPESENSE_URL: 'http://ts:8108',
        LOG_LEVEL: 'loud',
      });
      throw new Error('expected a ConfigError');
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      const problems = (err as ConfigError).problems.join('\n');
      expect(problems).toMatch(/PORT/);
      expect(problems).toMatch(/REDIS_URL/);
      expect(problems).toMatch(/TYPESENSE_API_KEY: required when QUARRY_SEARCH_BACKEND=typesense/);
      expect(problems).toMatch(/LOG_LEVEL/);
    }
  });

  it('treats empty variables as unset, except stores, secrets and the search backend', () => {
    expect(loadConfig({ LOG_LEVEL: '', QUARRY_MEMORY_INDEX_MB: '' }).logLevel).toBe('info');
  });
});

// The search backend is a setting of its own, and empty values are refused where
// k8s/overlays/prod/secrets/*.env.example promise it ("an empty value is not accepted").
describe('the search backend and empty values', () => {
  const problemsOf = (env: Record<string, string>): string[] => {
    try {
      loadConfig(env);
      return [];
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      return err.problems;
    }
  };
  const ts = { TYPESENSE_URL: 'http://ts:8108', TYPESENSE_API_KEY: 'search-key' };

  it('is embedded unless QUARRY_SEARCH_BACKEND says typesense', () => {
    expect(loadConfig({})).toMatchObject({ searchBackend: 'embedded', typesense: undefined });
    expect(loadConfig({ QUARRY_SEARCH_BACKEND: 'typesense', ...ts })).toMatchObject({
      searchBackend: 'typesense',
      typesense: { url: 'http://ts:8108', apiKey: 'search-key' },
    });
    expect(problemsOf({ QUARRY_SEARCH_BACKEND: 'duckdb' })).toEqual([
      'QUARRY_SEARCH_BACKEND: must be embedded or typesense',
    ]);
  });

  it('crosstabs on DuckDB unless QUARRY_PIVOT_ENGINE says clickhouse; a ClickHouse URL only with that engine', () => {
    expect(loadConfig({})).toMatchObject({ pivotEngine: 'duckdb', clickhouse: undefined });
    expect(loadConfig({ QUARRY_PIVOT_ENGINE: 'clickhouse' })).toMatchObject({
      pivotEngine: 'clickhouse',
      clickhouse: undefined,
    });
    expect(
      loadConfig({
        QUARRY_PIVOT_ENGINE: 'clickhouse',
        CLICKHOUSE_URL: 'http://u:p@ch:8123',
        CLICKHOUSE_CLUSTER: 'quarry',
      }),
    ).toMatchObject({ clickhouse: { url: 'http://u:p@ch:8123', database: 'quarry', cluster: 'quarry' } });
    expect(problemsOf({ QUARRY_PIVOT_ENGINE: 'ClickHouse' })).toEqual([
      'QUARRY_PIVOT_ENGINE: must be duckdb or clickhouse',
    ]);
    expect(problemsOf({ CLICKHOUSE_URL: 'http://ch:8123' })).toEqual([
      'CLICKHOUSE_URL: is set, but QUARRY_PIVOT_ENGINE is not clickhouse; set both or neither',
    ]);
    expect(problemsOf({ QUARRY_PIVOT_ENGINE: 'clickhouse', CLICKHOUSE_URL: 'tcp://ch:9000' })[0]).toMatch(
      /^CLICKHOUSE_URL: /,
    );
    expect(
      problemsOf({
        QUARRY_PIVOT_ENGINE: 'clickhouse',
        CLICKHOUSE_URL: 'http://ch:8123',
        CLICKHOUSE_DATABASE: 'a;b',
      })[0],
    ).toMatch(/^CLICKHOUSE_DATABASE: /);
  });

  it('refuses TYPESENSE_URL without QUARRY_SEARCH_BACKEND=typesense: the variables no longer choose', () => {
    expect(problemsOf(ts)).toEqual([
      'TYPESENSE_URL: is set, but QUARRY_SEARCH_BACKEND is unset (embedded); set QUARRY_SEARCH_BACKEND=typesense to search with Typesense, or unset TYPESENSE_URL',
    ]);
    expect(problemsOf({ QUARRY_SEARCH_BACKEND: 'embedded', ...ts })[0]).toMatch(
      /TYPESENSE_URL: is set, but QUARRY_SEARCH_BACKEND is embedded/,
    );
  });

  it('wants the Typesense settings in a process that searches, not in one that does not', () => {
    const token = { QUARRY_INTERNAL_TOKEN: 'k'.repeat(32) };
    expect(problemsOf({ QUARRY_SEARCH_BACKEND: 'typesense' })).toEqual([
      'TYPESENSE_URL, TYPESENSE_API_KEY: required when QUARRY_SEARCH_BACKEND=typesense',
    ]);
    expect(
      problemsOf({
        QUARRY_TARGET: 'query',
        QUARRY_SEARCH_BACKEND: 'typesense',
        TYPESENSE_URL: ts.TYPESENSE_URL,
        ...token,
      }),
    ).toEqual(['TYPESENSE_API_KEY: required when QUARRY_SEARCH_BACKEND=typesense']);
    // The gateway and the crosstab service never talk to Typesense: no key is handed to them (item 5).
    const gateway = loadConfig({ QUARRY_TARGET: 'gateway,crosstab', QUARRY_SEARCH_BACKEND: 'typesense', ...token });
    expect(gateway).toMatchObject({ searchBackend: 'typesense', typesense: undefined });
  });

  it.each([
    'MONGODB_URL',
    'REDIS_URL',
    'TYPESENSE_URL',
    'TYPESENSE_API_KEY',
    'QUARRY_CURSOR_SECRET',
    'QUARRY_SEARCH_BACKEND',
  ])('refuses an empty %s instead of silently choosing another store', (name) => {
    expect(problemsOf({ [name]: '' })).toContain(`${name}: is set but empty; give it a value or leave it out`);
  });

  it('refuses every key of the prod Secret examples left empty, as the examples promise', () => {
    const dir = path.join(__dirname, '..', '..', '..', 'k8s', 'overlays', 'prod', 'secrets');
    const keys = fs
      .readdirSync(dir)
      .filter((f) => f.endsWith('.env.example'))
      .flatMap((f) => fs.readFileSync(path.join(dir, f), 'utf8').split('\n'))
      .filter((l) => l.trim() && !l.startsWith('#'))
      .map((l) => l.slice(0, l.indexOf('=')));
    expect(keys.length).toBeGreaterThan(0);
    for (const key of keys)
      expect({ key, problems: problemsOf({ [key]: '' }) }).toEqual({
        key,
        problems: expect.arrayContaining([`${key}: is set but empty; give it a value or leave it out`]),
      });
  });
});

describe('service addresses', () => {
  it('gives hosted services a free loopback port and split ones their configured port', () => {
    expect(serviceListenAddr(loadConfig({}), 'query')).toBe('127.0.0.1:0');
    const token = 'k'.repeat(32);
    const split = loadConfig({
      QUARRY_TARGET: 'query',
      QUARRY_QUERY_ADDR: 'query:6000',
      QUARRY_GRPC_LISTEN_HOST: '0.0.0.0',
      QUARRY_INTERNAL_TOKEN: token,
    });
    expect(serviceListenAddr(split, 'query')).toBe('0.0.0.0:6000');
    expect(serviceAddr(loadConfig({ QUARRY_TARGET: 'gateway', QUARRY_INTERNAL_TOKEN: token }), 'reports')).toBe(
      '127.0.0.1:50054',
    );
  });
});

describe('the internal credential (QUARRY_INTERNAL_TOKEN)', () => {
  const token = 'k'.repeat(32);

  it('is required whenever the gateway and some service run in different processes', () => {
    for (const target of [
      'gateway',
      'query',
      'crosstab',
      'chart',
      'reports',
      'gateway,query',
      'query,crosstab,chart,reports',
      'gateway,query,crosstab,chart,chart-worker',
    ]) {
      expect(() => loadConfig({ QUARRY_TARGET: target })).toThrow(
        /QUARRY_INTERNAL_TOKEN: is required when the gateway and the services run in different processes/,
      );
      expect(loadConfig({ QUARRY_TARGET: target, QUARRY_INTERNAL_TOKEN: token }).grpc.internalToken).toBe(token);
    }
  });

  it('is made up per process, 32 random bytes, when all gRPC parties run in this one', () => {
    const a = loadConfig({}).grpc.internalToken;
    const b = loadConfig({ QUARRY_TARGET: 'gateway,query,crosstab,chart,reports,ingest' }).grpc.internalToken;
    expect(a).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(a, 'base64url')).toHaveLength(32);
    expect(b).not.toBe(a);
    // A process without gRPC needs none from outside either.
    expect(() => loadConfig({ QUARRY_TARGET: 'chart-worker' })).not.toThrow();
    expect(loadConfig({ QUARRY_INTERNAL_TOKEN: token }).grpc.internalToken).toBe(token);
  });

  it('refuses a short one, one with spaces or non-ASCII, and an absurdly long one', () => {
    for (const bad of [
      'k'.repeat(31),
      `${'k'.repeat(32)} x`,
      `${'k'.repeat(32)}é`,
      `${'k'.repeat(32)}\n`,
      'k'.repeat(1025),
    ]) {
      expect(() => loadConfig({ QUARRY_TARGET: 'query', QUARRY_INTERNAL_TOKEN: bad })).toThrow(
        /QUARRY_INTERNAL_TOKEN: must be/,
      );
    }
    // An empty value is "unset", so in a split process it is missing, not silently accepted.
    expect(() => loadConfig({ QUARRY_TARGET: 'query', QUARRY_INTERNAL_TOKEN: '' })).toThrow(
      /QUARRY_INTERNAL_TOKEN: is required/,
    );
  });

  it('is not reported as missing when the target list itself is wrong', () => {
    try {
      loadConfig({ QUARRY_TARGET: 'gateway,bogus' });
      throw new Error('expected a ConfigError');
    } catch (err) {
      expect((err as ConfigError).problems.join('\n')).not.toMatch(/INTERNAL_TOKEN/);
    }
  });
});

describe('secrets read from files (QUARRY_INTERNAL_TOKEN_FILE, QUARRY_CURSOR_SECRET_FILE)', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'q-config-'));
  const write = (name: string, text: string | Buffer, mode = 0o600) => {
    const file = path.join(dir, name);
    fs.writeFileSync(file, text, { mode });
    return file;
  };

  it('reads the value from the file, without its trailing newline', () => {
    const c = loadConfig({
      QUARRY_TARGET: 'reports',
      QUARRY_INTERNAL_TOKEN_FILE: write('token', `${'t'.repeat(40)}\n`),
      QUARRY_CURSOR_SECRET_FILE: write('cursor', `${'c'.repeat(32)}\r\n`),
    });
    expect(c.grpc.internalToken).toBe('t'.repeat(40));
    expect(c.cursorSecret).toBe('c'.repeat(32));
  });

  it("validates the file's content by the variable's own rule and says it came from the file", () => {
    expect(() => loadConfig({ QUARRY_TARGET: 'query', QUARRY_INTERNAL_TOKEN_FILE: write('short', 'abc\n') })).toThrow(
      /QUARRY_INTERNAL_TOKEN \(read from QUARRY_INTERNAL_TOKEN_FILE\): must be at least 32 characters/,
    );
    expect(() => loadConfig({ QUARRY_CURSOR_SECRET_FILE: write('empty', '') })).toThrow(
      /QUARRY_CURSOR_SECRET \(read from QUARRY_CURSOR_SECRET_FILE\): must be at least 32/,
    );
  });

  it('never quotes the secret in a problem', () => {
    const secret = `${'s'.repeat(31)}`;
    try {
      loadConfig({ QUARRY_TARGET: 'query', QUARRY_INTERNAL_TOKEN_FILE: write('secret', secret) });
      throw new Error('expected a ConfigError');
    } catch (err) {
      expect((err as ConfigError).message).not.toContain(secret);
    }
  });

  it('refuses a missing file, a directory, a device, a FIFO, an oversized file and a file it may not read', () => {
    const fifo = path.join(dir, 'fifo');
    execFileSync('mkfifo', [fifo]);
    const cases: Array<[string, RegExp]> = [
      [path.join(dir, 'nope'), /QUARRY_INTERNAL_TOKEN_FILE: cannot read ".*nope" \(ENOENT\)/],
      [dir, /QUARRY_INTERNAL_TOKEN_FILE: ".*" is not a regular file/],
      ['/dev/zero', /QUARRY_INTERNAL_TOKEN_FILE: "\/dev\/zero" is not a regular file/],
      // Without O_NONBLOCK this would hang start-up waiting for a writer.
      [fifo, /QUARRY_INTERNAL_TOKEN_FILE: ".*fifo" is not a regular file/],
      [write('huge', 'x'.repeat(4097)), /QUARRY_INTERNAL_TOKEN_FILE: ".*huge" is larger than 4096 bytes/],
    ];
    if (process.getuid?.() !== 0)
      cases.push([write('locked', 'x'.repeat(40), 0o000), /cannot read ".*locked" \(EACCES\)/]);
    else process.stdout.write('skipping the unreadable-file case: running as root, which reads any file\n');
    for (const [file, problem] of cases)
      expect(() => loadConfig({ QUARRY_TARGET: 'query', QUARRY_INTERNAL_TOKEN_FILE: file })).toThrow(problem);
  });

  it('accepts a file right at the size limit', () => {
    expect(loadConfig({ QUARRY_CURSOR_SECRET_FILE: write('limit', 'x'.repeat(4096)) }).cursorSecret).toHaveLength(4096);
  });

  it('refuses the variable and its _FILE together, without also calling it missing', () => {
    try {
      loadConfig({
        QUARRY_TARGET: 'query',
        QUARRY_INTERNAL_TOKEN: 'k'.repeat(32),
        QUARRY_INTERNAL_TOKEN_FILE: write('both', 'k'.repeat(32)),
      });
      throw new Error('expected a ConfigError');
    } catch (err) {
      expect((err as ConfigError).problems).toEqual([
        'QUARRY_INTERNAL_TOKEN, QUARRY_INTERNAL_TOKEN_FILE: set one of them, not both',
      ]);
    }
    try {
      loadConfig({ QUARRY_TARGET: 'query', QUARRY_INTERNAL_TOKEN_FILE: path.join(dir, 'absent') });
      throw new Error('expected a ConfigError');
    } catch (err) {
      expect((err as ConfigError).problems).toHaveLength(1);
    }
  });
});

describe('gRPC mTLS files (QUARRY_GRPC_TLS_CERT, _KEY, _CA)', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'q-tls-'));
  const tls = makeTlsFixtures(dir);
  const env = (over: Record<string, string> = {}) => ({
    QUARRY_GRPC_TLS_CERT: tls.cert,
    QUARRY_GRPC_TLS_KEY: tls.key,
    QUARRY_GRPC_TLS_CA: tls.ca,
    ...over,
  });

  it('reads all three once into the config as PEM text', () => {
    const c = loadConfig(env());
    expect(c.grpc.tls).toEqual({
      cert: fs.readFileSync(tls.cert, 'utf8'),
      key: fs.readFileSync(tls.key, 'utf8'),
      ca: fs.readFileSync(tls.ca, 'utf8'),
    });
    expect(loadConfig({}).grpc.tls).toBeUndefined();
  });

  it('wants all three or none', () => {
    expect(() => loadConfig({ QUARRY_GRPC_TLS_CERT: tls.cert })).toThrow(
      /QUARRY_GRPC_TLS_KEY, QUARRY_GRPC_TLS_CA: required when QUARRY_GRPC_TLS_CERT is set \(all three or none\)/,
    );
    expect(() => loadConfig({ QUARRY_GRPC_TLS_CERT: tls.cert, QUARRY_GRPC_TLS_KEY: tls.key })).toThrow(
      /QUARRY_GRPC_TLS_CA: required when/,
    );
  });

  it('refuses files that are not what they claim, and a key of another certificate', () => {
    expect(() => loadConfig(env({ QUARRY_GRPC_TLS_CERT: tls.key }))).toThrow(
      /QUARRY_GRPC_TLS_CERT: is not a PEM certificate/,
    );
    expect(() => loadConfig(env({ QUARRY_GRPC_TLS_CA: path.join(dir, 'openssl.cnf') }))).toThrow(
      /QUARRY_GRPC_TLS_CA: is not a PEM certificate/,
    );
    expect(() => loadConfig(env({ QUARRY_GRPC_TLS_KEY: tls.cert }))).toThrow(
      /QUARRY_GRPC_TLS_KEY: is not an unencrypted PEM private key/,
    );
    expect(() => loadConfig(env({ QUARRY_GRPC_TLS_KEY: tls.foreignKey }))).toThrow(
      /QUARRY_GRPC_TLS_KEY: does not belong to the certificate/,
    );
    expect(() => loadConfig(env({ QUARRY_GRPC_TLS_CA: path.join(dir, 'missing.crt') }))).toThrow(
      /QUARRY_GRPC_TLS_CA: cannot read ".*missing.crt" \(ENOENT\)/,
    );
  });

  it('refuses a certificate out of its validity period', () => {
    const paths = { cert: tls.cert, key: tls.key, ca: tls.ca };
    expect(loadGrpcTls(paths)).toHaveProperty('tls');
    expect(loadGrpcTls(paths, new Date(Date.now() + 30 * 86_400_000))).toEqual({
      problems: [expect.stringMatching(/^QUARRY_GRPC_TLS_CERT: is valid only from .* to /)],
    });
  });
});

describe('chart queue bounds (CHART_QUEUE_MAX_WAITING, QUARRY_PRIVATE_REDIS_MAXMEMORY)', () => {
  it('defaults to 100 waiting renders and a 256mb private Redis', () => {
    const c = loadConfig({});
    expect(c.chart.queueMaxWaiting).toBe(100);
    expect(c.redis.privateMaxmemory).toBe('256mb');
  });

  it("takes redis-server's size notation and refuses anything else before it reaches a command line", () => {
    expect(loadConfig({ QUARRY_PRIVATE_REDIS_MAXMEMORY: '1GB' }).redis.privateMaxmemory).toBe('1GB');
    expect(loadConfig({ QUARRY_PRIVATE_REDIS_MAXMEMORY: '8388608' }).redis.privateMaxmemory).toBe('8388608');
    for (const bad of ['256 mb', '256mb --port 1', '-1', '1.5gb', '10tb', 'lots']) {
      expect(() => loadConfig({ QUARRY_PRIVATE_REDIS_MAXMEMORY: bad })).toThrow(
        /QUARRY_PRIVATE_REDIS_MAXMEMORY.*redis-server size/,
      );
    }
  });

  it('refuses a cap too small to hold the queue, and 0, which redis-server reads as no cap', () => {
    for (const small of ['0', '8m', '8388607', '1kb']) {
      expect(() => loadConfig({ QUARRY_PRIVATE_REDIS_MAXMEMORY: small })).toThrow(
        /QUARRY_PRIVATE_REDIS_MAXMEMORY.*at least 8mb/,
      );
    }
  });

  it('refuses a bound of no waiting renders at all', () => {
    expect(() => loadConfig({ CHART_QUEUE_MAX_WAITING: '0' })).toThrow(/CHART_QUEUE_MAX_WAITING/);
    expect(loadConfig({ CHART_QUEUE_MAX_WAITING: '5' }).chart.queueMaxWaiting).toBe(5);
  });
});

describe('the chart queue Redis password (REDIS_PASSWORD, REDIS_PASSWORD_FILE)', () => {
  it('puts the password, read from its file, into REDIS_URL', () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'q-redis-')), 'pw');
    fs.writeFileSync(file, 'p@ss/word:1\n', { mode: 0o600 });
    const c = loadConfig({ REDIS_URL: 'redis://redis:6379', REDIS_PASSWORD_FILE: file });
    expect(c.redis.url).toBe('redis://:p%40ss%2Fword%3A1@redis:6379');
    expect(decodeURIComponent(new URL(c.redis.url!).password)).toBe('p@ss/word:1');
  });

  it('refuses it without REDIS_URL, beside a URL that has one, and empty', () => {
    expect(() => loadConfig({ REDIS_PASSWORD: 'x' })).toThrow(/REDIS_PASSWORD: is set without REDIS_URL/);
    expect(() => loadConfig({ REDIS_URL: 'redis://:a@redis:6379', REDIS_PASSWORD: 'x' })).toThrow(
      /REDIS_URL carries a password already/,
    );
    expect(() => loadConfig({ REDIS_URL: 'redis://redis:6379', REDIS_PASSWORD: '' })).toThrow(
      /REDIS_PASSWORD: is set but empty/,
    );
  });
});

describe('fair admission and Chromium (QUARRY_HEAVY_PER_CALLER, QUARRY_CHROMIUM_IDLE_S)', () => {
  it('defaults to 1 heavy call per caller and Chromium closed after 300 s idle; 0 keeps it warm', () => {
    const c = loadConfig({});
    expect(c.heavyCalls.perCaller).toBe(1);
    expect(c.chart.chromiumIdleMs).toBe(300_000);
    expect(loadConfig({ QUARRY_CHROMIUM_IDLE_S: '0' }).chart.chromiumIdleMs).toBe(0);
    expect(loadConfig({ QUARRY_HEAVY_PER_CALLER: '3' }).heavyCalls.perCaller).toBe(3);
    for (const bad of ['0', '-1', '1.5', 'many'])
      expect(() => loadConfig({ QUARRY_HEAVY_PER_CALLER: bad })).toThrow(/QUARRY_HEAVY_PER_CALLER/);
    expect(() => loadConfig({ QUARRY_CHROMIUM_IDLE_S: '-5' })).toThrow(/QUARRY_CHROMIUM_IDLE_S/);
  });
});

describe('QUARRY_MEMORY_INDEX_MB (small indexes searched in memory)', () => {
  it('is 512 MiB by default, in bytes, and 0 turns it off', () => {
    expect(loadConfig({}).memoryIndexBytes).toBe(512 * 1024 * 1024);
    expect(loadConfig({ QUARRY_MEMORY_INDEX_MB: '64' }).memoryIndexBytes).toBe(64 * 1024 * 1024);
    expect(loadConfig({ QUARRY_MEMORY_INDEX_MB: '0' }).memoryIndexBytes).toBe(0);
  });

  it.each(['-1', '2.5', 'all', '1048577', 'Infinity'])('refuses %p', (value) => {
    expect(() => loadConfig({ QUARRY_MEMORY_INDEX_MB: value })).toThrow(/QUARRY_MEMORY_INDEX_MB/);
  });
});

describe('QUARRY_CACHE_MB (the result cache bound)', () => {
  it('is 256 MiB by default, in bytes, and 0 turns the cache off', () => {
    expect(loadConfig({}).resultCacheBytes).toBe(256 * 1024 * 1024);
    expect(loadConfig({ QUARRY_CACHE_MB: '1' }).resultCacheBytes).toBe(1024 * 1024);
    expect(loadConfig({ QUARRY_CACHE_MB: '0' }).resultCacheBytes).toBe(0);
  });

  it.each(['-1', '1.5', 'lots', '65537', 'Infinity'])('refuses %p', (value) => {
    expect(() => loadConfig({ QUARRY_CACHE_MB: value })).toThrow(/QUARRY_CACHE_MB/);
  });
});

describe('OpenTelemetry traces (OTEL_* variables)', () => {
  const problemsOf = (env: Record<string, string>): string => {
    try {
      loadConfig(env);
    } catch (err) {
      if (err instanceof ConfigError) return err.problems.join('\n');
      throw err;
    }
    throw new Error('expected a ConfigError');
  };

  it('is off without an endpoint, and with OTEL_SDK_DISABLED=true even with one', () => {
    expect(loadConfig({}).tracing).toBeUndefined();
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: '' }).tracing).toBeUndefined();
    expect(
      loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'TRUE' }).tracing,
    ).toBeUndefined();
    // Only "true" disables; anything else leaves tracing on.
    expect(
      loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'false' }).tracing,
    ).toBeDefined();
  });

  it('sends to the base endpoint + v1/traces over http/protobuf by default, as the specification says', () => {
    const t = loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }).tracing;
    expect(t).toEqual({
      url: 'http://collector:4318/v1/traces',
      protocol: 'http/protobuf',
      headers: {},
      serviceName: 'quarry',
      resourceAttributes: {},
      sampler: 'parentbased_always_on',
      samplerRatio: 1,
      scheduleDelayMs: 5000,
      timeoutMs: 10000,
    });
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'https://otel.example/base/' }).tracing?.url).toBe(
      'https://otel.example/base/v1/traces',
    );
  });

  it('takes the traces endpoint and protocol as given, before the general ones', () => {
    const t = loadConfig({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://traces:9999/custom/path',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
      OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json',
    }).tracing;
    expect(t).toMatchObject({ url: 'http://traces:9999/custom/path', protocol: 'http/json' });
  });

  it('refuses gRPC export and unknown protocols, naming what is offered', () => {
    expect(problemsOf({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4317', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toMatch(
      /OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" is not offered: Quarry exports traces over OTLP\/HTTP, http\/protobuf or http\/json/,
    );
    expect(problemsOf({ OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'thrift' })).toMatch(/OTEL_EXPORTER_OTLP_TRACES_PROTOCOL/);
    expect(problemsOf({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' })).toMatch(
      /OTEL_EXPORTER_OTLP_ENDPOINT: must be a URL with scheme http: or https:/,
    );
  });

  it('reads headers and resource attributes as percent-encoded key=value pairs', () => {
    const t = loadConfig({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318',
      OTEL_EXPORTER_OTLP_HEADERS: 'api-key=s%3Dcr%2Ct, x-tenant = blue ,',
      OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=prod,k8s.pod.name=gateway-0',
    }).tracing;
    expect(t?.headers).toEqual({ 'api-key': 's=cr,t', 'x-tenant': 'blue' });
    expect(t?.resourceAttributes).toEqual({ 'deployment.environment': 'prod', 'k8s.pod.name': 'gateway-0' });
  });

  it('refuses a malformed pair without quoting it (a header may be an API key)', () => {
    const problems = problemsOf({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318',
      OTEL_EXPORTER_OTLP_HEADERS: 'api-key=fine,secretwithoutequals,bad=%E0%A4%A',
    });
    expect(problems).toMatch(/OTEL_EXPORTER_OTLP_HEADERS: item 2 is not key=value/);
    expect(problems).not.toMatch(/secretwithoutequals/);
    expect(problemsOf({ OTEL_EXPORTER_OTLP_HEADERS: '=value' })).toMatch(/item 1 is not key=value/);
    expect(problemsOf({ OTEL_EXPORTER_OTLP_HEADERS: 'k=%E0%A4%A' })).toMatch(/item 1 is not key=value/);
  });

  it("names the service after the process's targets unless OTEL_SERVICE_NAME or the resource says otherwise", () => {
    const base = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', QUARRY_INTERNAL_TOKEN: 'k'.repeat(32) };
    expect(loadConfig({ ...base, QUARRY_TARGET: 'chart-worker' }).tracing?.serviceName).toBe('quarry-chart-worker');
    expect(loadConfig({ ...base, QUARRY_TARGET: 'query,crosstab' }).tracing?.serviceName).toBe('quarry-query-crosstab');
    expect(loadConfig({ ...base, OTEL_RESOURCE_ATTRIBUTES: 'service.name=bi' }).tracing?.serviceName).toBe('bi');
    expect(
      loadConfig({ ...base, OTEL_RESOURCE_ATTRIBUTES: 'service.name=bi', OTEL_SERVICE_NAME: 'quarry-eu' }).tracing
        ?.serviceName,
    ).toBe('quarry-eu');
  });

  it('takes a sampler by its standard name and a ratio between 0 and 1', () => {
    const base = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' };
    expect(
      loadConfig({ ...base, OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.25' }).tracing,
    ).toMatchObject({ sampler: 'parentbased_traceidratio', samplerRatio: 0.25 });
    expect(problemsOf({ OTEL_TRACES_SAMPLER: 'jaeger_remote' })).toMatch(/OTEL_TRACES_SAMPLER: must be one of/);
    expect(problemsOf({ OTEL_TRACES_SAMPLER_ARG: '2' })).toMatch(/OTEL_TRACES_SAMPLER_ARG/);
    expect(problemsOf({ OTEL_BSP_SCHEDULE_DELAY: '-1' })).toMatch(/OTEL_BSP_SCHEDULE_DELAY/);
    expect(problemsOf({ OTEL_EXPORTER_OTLP_TIMEOUT: '0' })).toMatch(/OTEL_EXPORTER_OTLP_TIMEOUT/);
  });
});

// The settings of embedding, limits and audit, each refused with a message naming it.
describe('embedding, limits and audit settings', () => {
  const problemsOf = (env: Record<string, string>): string[] => {
    try {
      loadConfig(env);
      return [];
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      return err.problems;
    }
  };

  it('reads exact browser origins and refuses wildcards, paths and other schemes', () => {
    expect(
      loadConfig({ QUARRY_CORS_ORIGINS: 'https://app.example.com, http://127.0.0.1:3000' }).http.corsOrigins,
    ).toEqual(['https://app.example.com', 'http://127.0.0.1:3000']);
    for (const bad of [
      '*',
      'https://app.example.com/',
      'https://app.example.com/page',
      'ftp://x.example',
      'app.example.com',
      'null',
    ])
      expect({ bad, problems: problemsOf({ QUARRY_CORS_ORIGINS: bad }) }).toEqual({
        bad,
        problems: [
          expect.stringMatching(/^QUARRY_CORS_ORIGINS\.0: each origin must be exactly scheme:\/\/host\[:port\]/),
        ],
      });
  });

  it('reads a rate and a burst, and refuses a burst without a rate', () => {
    expect(loadConfig({ QUARRY_RATE_LIMIT: '2.5', QUARRY_RATE_BURST: '10' }).rateLimit).toEqual({
      perSecond: 2.5,
      burst: 10,
      keyPrefix: 'quarry:rate-limit',
    });
    expect(loadConfig({ QUARRY_RATE_LIMIT: '5' }).rateLimit).toEqual({
      perSecond: 5,
      burst: 0,
      keyPrefix: 'quarry:rate-limit',
    });
    expect(problemsOf({ QUARRY_RATE_BURST: '10' })).toEqual([
      'QUARRY_RATE_BURST: needs QUARRY_RATE_LIMIT (the rate the burst is above)',
    ]);
    expect(problemsOf({ QUARRY_RATE_LIMIT: '0' })[0]).toMatch(/^QUARRY_RATE_LIMIT:/);
    expect(problemsOf({ QUARRY_RATE_LIMIT: '5', QUARRY_RATE_BURST: '-1' })[0]).toMatch(/^QUARRY_RATE_BURST:/);
  });

  it('keys the shared rate-limit counters under QUARRY_RATE_LIMIT_PREFIX, refusing what is not a plain key part', () => {
    expect(loadConfig({ QUARRY_RATE_LIMIT: '5', QUARRY_RATE_LIMIT_PREFIX: 'staging:rl' }).rateLimit?.keyPrefix).toBe(
      'staging:rl',
    );
    for (const bad of ['a b', 'x*', 'k'.repeat(101), 'quarry\nrate'])
      expect(problemsOf({ QUARRY_RATE_LIMIT: '5', QUARRY_RATE_LIMIT_PREFIX: bad })).toEqual([
        'QUARRY_RATE_LIMIT_PREFIX: must be 1 to 100 letters, digits or _ . : -',
      ]);
  });

  it('takes the embed key from the environment or a file, at least 32 characters, never empty', () => {
    expect(loadConfig({ QUARRY_EMBED_SECRET: 'e'.repeat(32) }).embedSecret).toBe('e'.repeat(32));
    expect(problemsOf({ QUARRY_EMBED_SECRET: 'short' })).toEqual([
      'QUARRY_EMBED_SECRET: must be at least 32 characters',
    ]);
    expect(problemsOf({ QUARRY_EMBED_SECRET: '' })).toContain(
      'QUARRY_EMBED_SECRET: is set but empty; give it a value or leave it out',
    );
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'q-embed-')), 'key');
    fs.writeFileSync(file, `${'k'.repeat(40)}\n`);
    expect(loadConfig({ QUARRY_EMBED_SECRET_FILE: file }).embedSecret).toBe('k'.repeat(40));
  });

  it('bounds the body deadline and the audit retention', () => {
    expect(loadConfig({ QUARRY_BODY_TIMEOUT_MS: '250', QUARRY_AUDIT_DAYS: '7' })).toMatchObject({
      http: { bodyTimeoutMs: 250 },
      auditDays: 7,
    });
    expect(problemsOf({ QUARRY_BODY_TIMEOUT_MS: '0' })[0]).toMatch(/^QUARRY_BODY_TIMEOUT_MS:/);
    expect(problemsOf({ QUARRY_AUDIT_DAYS: '0' })[0]).toMatch(/^QUARRY_AUDIT_DAYS:/);
  });
});

describe('OpenID Connect settings', () => {
  const issuer = { QUARRY_OIDC_ISSUER: 'https://id.example.com/', QUARRY_OIDC_AUDIENCE: 'urn:quarry' };
  it('is off unless an issuer and an audience are both set, with sub and scope as the default claims', () => {
    expect(loadConfig({}).oidc).toBeUndefined();
    expect(loadConfig(issuer).oidc).toEqual({
      issuer: 'https://id.example.com/',
      audience: 'urn:quarry',
      userClaim: 'sub',
      scopesClaim: 'scope',
      realms: {},
    });
    const full = loadConfig({
      ...issuer,
      QUARRY_OIDC_USER_CLAIM: 'email',
      QUARRY_OIDC_INDEXES_CLAIM: 'https://quarry.example/indexes',
      QUARRY_OIDC_REALMS: '{"orders": "tenant:={tenant}"}',
    }).oidc;
    expect(full).toMatchObject({
      userClaim: 'email',
      indexesClaim: 'https://quarry.example/indexes',
      realms: { orders: 'tenant:={tenant}' },
    });
  });

  it.each([
    [{ QUARRY_OIDC_ISSUER: 'https://id.example.com/' }, /set both or neither/],
    [{ QUARRY_OIDC_AUDIENCE: 'urn:quarry' }, /set both or neither/],
    [{ QUARRY_OIDC_REALMS: '{"a":"b"}' }, /QUARRY_OIDC_REALMS: needs QUARRY_OIDC_ISSUER/],
    [{ ...issuer, QUARRY_OIDC_ISSUER: 'ftp://id.example.com' }, /QUARRY_OIDC_ISSUER: must be a URL/],
    [{ ...issuer, QUARRY_OIDC_REALMS: '{orders: x}' }, /QUARRY_OIDC_REALMS: must be JSON/],
    [{ ...issuer, QUARRY_OIDC_REALMS: '["tenant:{t}"]' }, /must be a JSON object of index name/],
    [{ ...issuer, QUARRY_OIDC_REALMS: '{"orders": "  "}' }, /non-blank query template/],
    [{ ...issuer, QUARRY_OIDC_USER_CLAIM: 'a b' }, /QUARRY_OIDC_USER_CLAIM: must be a claim name/],
  ])('refuses %j, naming the setting', (env, problem) => {
    expect(() => loadConfig(env)).toThrow(problem);
  });
});
