import { randomBytes } from 'node:crypto';
import { CLIENT_OPTIONS, grpc, INTERNAL_TOKEN_HEADER, loadQuarryProto, type pb } from '@quarry/rpc';
import { createIdentity, type Identity } from './support/identities';
import { linesEventually, spawnServe, stopProc, E2E_INTERNAL_TOKEN, type Proc } from './support/quarry-process';
import { startStackWithData, type Stack } from './support/stack';
import { healthClient, healthStatus } from '@quarry/testkit';

const v1 = loadQuarryProto().quarry.v1;

/** What any process on the host could send: a caller message claiming to be an admin of every index. */
const forgedAdmin: pb.Caller = {
  userId: 'forged',
  userName: 'mallory',
  admin: true,
  indexes: ['*'],
  realms: [],
  scopes: ['query:execute', 'indexes:read', 'reports:read', 'reports:write'],
};

/** One method of each service, called straight on its gRPC port with the metadata given. */
const SERVICE_METHODS = [
  {
    service: 'query',
    addr: 'QUARRY_QUERY_ADDR',
    method: v1.QueryService.service.FindIndexes,
    request: { caller: forgedAdmin, paramsJson: JSON.stringify({ limit: 100 }) },
  },
  {
    service: 'query',
    addr: 'QUARRY_QUERY_ADDR',
    method: v1.QueryService.service.ExecuteQuery,
    request: { caller: forgedAdmin, paramsJson: JSON.stringify({ index: 'flights', query: '*' }) },
  },
  {
    service: 'crosstab',
    addr: 'QUARRY_CROSSTAB_ADDR',
    method: v1.CrosstabService.service.ExecuteCrosstab,
    request: { caller: forgedAdmin, paramsJson: JSON.stringify({ index: 'flights' }), output: 'html' },
  },
  {
    service: 'chart',
    addr: 'QUARRY_CHART_ADDR',
    method: v1.ChartService.service.RenderChart,
    request: { gridJson: '{}', chartType: 'bar', title: 'anyone may render?' },
  },
  {
    service: 'reports',
    addr: 'QUARRY_REPORTS_ADDR',
    method: v1.ReportsService.service.FindReports,
    request: { caller: forgedAdmin },
  },
] as const;

interface Method {
  path: string;
  requestSerialize: (value: never) => Buffer;
  responseDeserialize: (bytes: Buffer) => unknown;
}

function direct(addr: string, method: Method, request: unknown, credential: string | undefined) {
  const client = new grpc.Client(addr, grpc.credentials.createInsecure(), CLIENT_OPTIONS);
  const metadata = new grpc.Metadata();
  if (credential !== undefined) metadata.set(INTERNAL_TOKEN_HEADER, credential);
  const serialize = method.requestSerialize as (value: unknown) => Buffer;
  return new Promise<unknown>((resolve, reject) => {
    client.makeUnaryRequest(
      method.path,
      serialize,
      method.responseDeserialize,
      request,
      metadata,
      { deadline: Date.now() + 10000 },
      (err, res) => {
        client.close();
        if (err) reject(err);
        else resolve(res);
      },
    );
  });
}

describe('trust between processes (QUARRY_TARGET split into one process per target)', () => {
  let stack: Stack;
  let ana: Identity;
  const wiring = () => {
    const w = stack.quarry.wiring;
    if (!w) throw new Error('the split topology reports its wiring');
    return w;
  };

  beforeAll(async () => {
    stack = await startStackWithData({ topology: 'split' });
    // Ana may read movies only: a forged admin caller would see flights too.
    ana = await createIdentity(stack.dataDir, 'ana', { indexes: 'movies' });
    // A hang guard: two loads, then six processes started (in two rounds) on 2 loaded cores.
  }, 300_000);

  afterAll(async () => {
    await stack?.quarry.stop();
  });

  it('serves users through the gateway, which holds the shared credential', async () => {
    const res = await stack.call<{ indexes: Array<{ name: string }> }>(ana, 'INDEXES.FIND', {});
    expect(res.error).toBeUndefined();
    expect(res.data?.indexes.map((i) => i.name)).toEqual(['movies']);
  });

  it.each(SERVICE_METHODS.map((t) => [`${t.service} ${t.method.path}`, t] as const))(
    'refuses a direct call to %s with a forged admin caller and no credential',
    async (_name, t) => {
      const call = (credential: string | undefined) => direct(wiring()[t.addr]!, t.method, t.request, credential);
      const refused = {
        code: grpc.status.UNAUTHENTICATED,
        details: expect.stringMatching(/internal credential is missing or wrong/),
      };
      await expect(call(undefined)).rejects.toMatchObject(refused);
      await expect(call('')).rejects.toMatchObject(refused);
      // Wrong values of the same length and of another length.
      await expect(
        call(randomBytes(E2E_INTERNAL_TOKEN.length).toString('base64url').slice(0, E2E_INTERNAL_TOKEN.length)),
      ).rejects.toMatchObject(refused);
      await expect(call(`${E2E_INTERNAL_TOKEN}x`)).rejects.toMatchObject(refused);
    },
  );

  it('would have served the forged caller had it held the credential: the credential is what keeps it out', async () => {
    const find = v1.QueryService.service.FindIndexes;
    const res = (await direct(
      wiring().QUARRY_QUERY_ADDR!,
      find,
      { caller: forgedAdmin, paramsJson: JSON.stringify({ limit: 100 }) },
      E2E_INTERNAL_TOKEN,
    )) as pb.FindIndexesResponse__Output;
    expect(res.indexes.map((i) => i.name).sort()).toEqual(['flights', 'movies']);
  });

  it('keeps grpc.health.v1 open to probes without a credential', async () => {
    const health = healthClient(wiring().QUARRY_QUERY_ADDR!);
    try {
      expect(await healthStatus(health, 'quarry.v1.QueryService')).toBe('SERVING');
    } finally {
      health.close();
    }
  });

  it('a gateway holding another credential gets 503 naming QUARRY_INTERNAL_TOKEN, not a 401, and logs an error', async () => {
    const { QUARRY_INTERNAL_TOKEN: _shared, ...rest } = wiring();
    const other = `another-${randomBytes(24).toString('base64url')}`;
    const { proc, port } = await spawnServe({
      QUARRY_DATA_DIR: stack.dataDir,
      ...rest,
      QUARRY_TARGET: 'gateway',
      QUARRY_INTERNAL_TOKEN: other,
    });
    try {
      const res = await fetch(`http://127.0.0.1:${port}/api/v1`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${ana.token}` },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'INDEXES.FIND', params: {} }),
      });
      const body = (await res.json()) as { error?: { code: number; data?: { detail: string } } };
      expect(body.error?.code).toBe(503);
      expect(body.error?.data?.detail).toBe(
        "The query service refused the gateway's internal credential (QUARRY_INTERNAL_TOKEN differs between processes)",
      );
      // The adapter's own line is the error; the request's 'rpc refused' line repeats the detail at info,
      // and may or may not have reached the pipe yet, so only lines whose message names the refusal count.
      const logged = await waitForLines(proc, (l) => l.msg.includes("refused the gateway's internal credential"));
      expect(logged.length).toBeGreaterThan(0);
      expect(logged.every((l) => l.level === 50)).toBe(true);
      expect(proc.lines.join('\n')).not.toContain(other);
    } finally {
      await stopProc(proc);
    }
    // A hang guard: the gateway's start alone may take up to a minute on a loaded machine.
  }, 120_000);
});

interface LogLine {
  level: number;
  msg: string;
}

/** The process's JSON log lines that match, once at least one has come through the pipe (a hang guard of 30 s). */
async function waitForLines(proc: Proc, match: (l: LogLine) => boolean): Promise<LogLine[]> {
  const matching = (lines: string[]) =>
    lines.flatMap((l) => (l.startsWith('{') ? [JSON.parse(l) as LogLine] : [])).filter(match);
  return matching(
    await linesEventually(
      () => proc.lines,
      (lines) => matching(lines).length > 0,
      30_000,
    ),
  );
}
