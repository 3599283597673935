import type { Caller } from '../ports/service-clients.port';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { indexesFindParamsCodec } from '@quarry/contract';
import { AppError } from '@quarry/errors';
import { createRootLogger, silentLogger } from '@quarry/logger';
import { GrpcServiceModule, loadQuarryProto, unary, type GrpcTls, type pb } from '@quarry/rpc';
import { makeTlsFixtures, tlsTarget } from '@quarry/testkit';
import { GrpcServiceClients } from './grpc-service-clients.adapter';

const v1 = loadQuarryProto().quarry.v1;
const TOKEN = 'services-internal-token-0123456789abcdef';
const caller: Caller = {
  userId: 'u1',
  userName: 'ana',
  admin: false,
  indexes: ['*'],
  realms: [],
  scopes: ['indexes:read'],
};

/** A query service that answers FindIndexes, or refuses a cursor "gone" with NOT_FOUND. */
function queryService(tls: GrpcTls | undefined) {
  const log = silentLogger();
  const module = new GrpcServiceModule({
    name: 'query',
    log,
    listenAddr: '127.0.0.1:0',
    graceMs: 500,
    serviceName: 'quarry.v1.QueryService',
    definition: v1.QueryService.service,
    implementation: {
      FindIndexes: unary<pb.FindIndexesRequest__Output, pb.FindIndexesResponse__Output>(
        log,
        'FindIndexes',
        async (req) => {
          if (indexesFindParamsCodec.decode(req.paramsJson).cursor === 'gone')
            throw AppError.notFound('Cursor "gone" not found');
          return {
            indexes: [{ name: 'movies', description: '', recordCount: 1, fields: [], dynamicViews: [], updatedAt: '' }],
            nextCursor: '',
          };
        },
      ),
    },
    readiness: async () => undefined,
  });
  return { module, start: () => module.start({ internalToken: TOKEN, tls }) };
}

function capture() {
  const lines: Array<Record<string, unknown>> = [];
  const log = createRootLogger(
    'info',
    new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
        done();
      },
    }),
  );
  return { log, lines };
}

const addrs = (query: string) => ({
  query,
  crosstab: '127.0.0.1:1',
  chart: '127.0.0.1:1',
  reports: '127.0.0.1:1',
  ingest: '127.0.0.1:1',
});

describe('GrpcServiceClients and the internal credential', () => {
  const svc = queryService(undefined);
  beforeAll(() => svc.start());
  afterAll(() => svc.module.stop());

  it('sends the credential of its config, so the service serves it', async () => {
    const clients = new GrpcServiceClients(
      addrs(svc.module.address),
      3000,
      { internalToken: TOKEN, tls: undefined },
      silentLogger(),
    );
    try {
      const res = await clients.findIndexes(caller, { limit: 5 }, { requestId: 'r1' });
      expect(res.indexes.map((i) => i.name)).toEqual(['movies']);
      // Other refusals of a service still pass through unchanged.
      await expect(
        clients.findIndexes(caller, { cursor: 'gone', limit: 20 }, { requestId: 'r2' }),
      ).rejects.toMatchObject({
        code: 'NOT_FOUND',
        detail: 'Cursor "gone" not found',
      });
    } finally {
      clients.close();
    }
  });

  it('turns a refused credential into UNAVAILABLE naming the cause, never a 401 about the client token, and logs an error', async () => {
    const { log, lines } = capture();
    const clients = new GrpcServiceClients(
      addrs(svc.module.address),
      3000,
      { internalToken: 'x'.repeat(40), tls: undefined },
      log,
    );
    try {
      const err = await clients.findIndexes(caller, { limit: 20 }, { requestId: 'req-7' }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(AppError);
      expect(err).toMatchObject({
        code: 'UNAVAILABLE',
        detail:
          "The query service refused the gateway's internal credential (QUARRY_INTERNAL_TOKEN differs between processes)",
      });
      expect((err as AppError).httpStatus).toBe(503);
      expect(lines).toEqual([
        expect.objectContaining({
          level: 50,
          requestId: 'req-7',
          service: 'query',
          msg: "the query service refused the gateway's internal credential",
        }),
      ]);
      expect(JSON.stringify(lines)).not.toContain('x'.repeat(40));
    } finally {
      clients.close();
    }
  });
});

describe('GrpcServiceClients over mTLS', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'q-gw-mtls-'));
  const files = makeTlsFixtures(dir);
  const tls: GrpcTls = {
    ca: fs.readFileSync(files.ca, 'utf8'),
    cert: fs.readFileSync(files.cert, 'utf8'),
    key: fs.readFileSync(files.key, 'utf8'),
  };
  const svc = queryService(tls);
  beforeAll(() => svc.start());
  afterAll(() => svc.module.stop());

  it('reaches a TLS service with the configured certificates, and cannot without them', async () => {
    const secure = new GrpcServiceClients(
      addrs(tlsTarget(svc.module.address)),
      3000,
      { internalToken: TOKEN, tls },
      silentLogger(),
    );
    const plain = new GrpcServiceClients(
      addrs(tlsTarget(svc.module.address)),
      3000,
      { internalToken: TOKEN, tls: undefined },
      silentLogger(),
    );
    try {
      expect((await secure.findIndexes(caller, { limit: 20 }, { requestId: 'r' })).indexes).toHaveLength(1);
      await expect(plain.findIndexes(caller, { limit: 20 }, { requestId: 'r' })).rejects.toMatchObject({
        code: 'UNAVAILABLE',
        detail: 'The query service is unavailable; try again shortly',
      });
    } finally {
      secure.close();
      plain.close();
    }
  });
});
