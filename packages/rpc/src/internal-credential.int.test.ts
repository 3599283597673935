import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import * as grpc from '@grpc/grpc-js';
import { createRootLogger } from '@quarry/logger';
import { healthClient, healthStatus, makeTlsFixtures, tlsTarget } from '@quarry/testkit';
import { CLIENT_OPTIONS, callUnary } from './grpc-client';
import { unary } from './grpc-server';
import {
  channelCredentials,
  INTERNAL_TOKEN_HEADER,
  requireInternalCredential,
  type GrpcTls,
  type GrpcTrust,
} from './internal-credential';
import { GrpcServiceModule } from './module';
import { loadQuarryProto } from './proto';
import type { FindIndexesRequest, FindIndexesRequest__Output, FindIndexesResponse__Output } from './generated/index';

const v1 = loadQuarryProto().quarry.v1;
const FIND = v1.QueryService.service.FindIndexes;
const TOKEN = 'the-right-internal-token-of-this-deployment-0123456789';

/** What a service would hand an admin caller: the test shows a forged admin never gets it. */
const SECRET_INDEX = 'payroll';

const checkHealth = healthStatus;

/** A stand-in query service that trusts the caller message exactly as services do. */
function startModule(trust: GrpcTrust | undefined, lines: string[]) {
  const served: FindIndexesRequest__Output[] = [];
  const log = createRootLogger(
    'warn',
    new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(chunk.toString());
        done();
      },
    }),
  );
  const module = new GrpcServiceModule({
    name: 'query',
    log,
    listenAddr: '127.0.0.1:0',
    graceMs: 500,
    serviceName: 'quarry.v1.QueryService',
    definition: v1.QueryService.service,
    implementation: {
      FindIndexes: unary<FindIndexesRequest__Output, FindIndexesResponse__Output>(log, 'FindIndexes', async (req) => {
        served.push(req);
        const names = req.caller?.admin ? [SECRET_INDEX, 'public'] : ['public'];
        return {
          indexes: names.map((name) => ({
            name,
            description: '',
            recordCount: 1,
            fields: [],
            dynamicViews: [],
            updatedAt: '',
          })),
          nextCursor: '',
        };
      }),
    },
    readiness: async () => undefined,
  });
  return { module, served, start: () => module.start(trust) };
}

/** One call with exactly the metadata given: what any local process could send. */
function rawCall(client: grpc.Client, metadata: grpc.Metadata, req: FindIndexesRequest) {
  return new Promise<FindIndexesResponse__Output>((resolve, reject) => {
    client.makeUnaryRequest(
      FIND.path,
      FIND.requestSerialize,
      FIND.responseDeserialize,
      req,
      metadata,
      { deadline: Date.now() + 3000 },
      (err, res) => (err ? reject(err) : resolve(res!)),
    );
  });
}

const forgedAdmin: FindIndexesRequest = {
  caller: { userId: 'u', userName: 'mallory', admin: true, indexes: ['*'], realms: [], scopes: ['indexes:read'] },
  paramsJson: JSON.stringify({ limit: 10 }),
};

describe('the internal credential on a real gRPC service (plaintext loopback)', () => {
  const lines: string[] = [];
  const svc = startModule({ internalToken: TOKEN, tls: undefined }, lines);
  let client: grpc.Client;

  beforeAll(async () => {
    await svc.start();
    client = new grpc.Client(svc.module.address, grpc.credentials.createInsecure(), CLIENT_OPTIONS);
  });
  afterAll(async () => {
    client.close();
    await svc.module.stop();
  });

  const withToken = (...values: string[]) => {
    const m = new grpc.Metadata();
    for (const v of values) m.add(INTERNAL_TOKEN_HEADER, v);
    return m;
  };
  const refused = { code: grpc.status.UNAUTHENTICATED };

  it('refuses a forged admin caller sent without the credential, before the handler reads anything', async () => {
    const before = svc.served.length;
    await expect(rawCall(client, new grpc.Metadata(), forgedAdmin)).rejects.toMatchObject(refused);
    expect(svc.served.length).toBe(before);
  });

  it('refuses a wrong credential of the same length and of other lengths', async () => {
    const sameLength = `${TOKEN.slice(0, -1)}X`;
    expect(sameLength).toHaveLength(TOKEN.length);
    for (const wrong of [sameLength, TOKEN.slice(0, -1), `${TOKEN}0`, 'x', TOKEN.toUpperCase(), ` ${TOKEN}`]) {
      await expect(rawCall(client, withToken(wrong), forgedAdmin)).rejects.toMatchObject(refused);
    }
    expect(svc.served).toEqual([]);
  });

  it('refuses the credential in another header, and a repeated header even when one copy is right', async () => {
    const bearer = new grpc.Metadata();
    bearer.set('authorization', `Bearer ${TOKEN}`);
    await expect(rawCall(client, bearer, forgedAdmin)).rejects.toMatchObject(refused);
    await expect(rawCall(client, withToken('wrong', TOKEN), forgedAdmin)).rejects.toMatchObject(refused);
    await expect(rawCall(client, withToken(TOKEN, TOKEN), forgedAdmin)).rejects.toMatchObject(refused);
    expect(svc.served).toEqual([]);
  });

  it('says so with the stable UNAUTHENTICATED code, and logs the peer but never the value sent', async () => {
    const attempt = 'attempted-credential-value-that-must-not-be-logged';
    const err = await rawCall(client, withToken(attempt), forgedAdmin).catch((e: grpc.ServiceError) => e);
    expect(err).toMatchObject({
      code: grpc.status.UNAUTHENTICATED,
      details: expect.stringMatching(/internal credential is missing or wrong/),
    });
    expect((err as grpc.ServiceError).metadata.get('quarry-error-code')).toEqual(['UNAUTHENTICATED']);
    // The log stream may trail the answer: wait for the line rather than a fixed pause.
    for (const deadline = Date.now() + 10_000; !/internal credential missing or wrong/.test(lines.join(''));) {
      if (Date.now() > deadline) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    const logged = lines.join('');
    expect(logged).toMatch(/internal credential missing or wrong/);
    expect(logged).toMatch(/"peer":"127\.0\.0\.1:\d+"/);
    expect(logged).not.toContain(attempt);
    expect(logged).not.toContain(TOKEN);
  });

  it('serves the call that carries the right credential (callUnary sends it)', async () => {
    const res = await callUnary('query', client.getChannel(), FIND, forgedAdmin, {
      requestId: 'r1',
      deadlineMs: 3000,
      internalToken: TOKEN,
    });
    expect(res.indexes.map((i) => i.name)).toEqual([SECRET_INDEX, 'public']);
    expect(svc.served).toHaveLength(1);
    await expect(
      callUnary('query', client.getChannel(), FIND, forgedAdmin, {
        requestId: 'r2',
        deadlineMs: 3000,
        internalToken: 'k'.repeat(32),
      }),
    ).rejects.toMatchObject({
      code: 'UNAUTHENTICATED',
    });
  });

  it('keeps grpc.health.v1 open to a caller without any credential', async () => {
    const health = healthClient(svc.module.address, grpc.credentials.createInsecure());
    try {
      expect(await checkHealth(health, '')).toBe('SERVING');
      expect(await checkHealth(health, 'quarry.v1.QueryService')).toBe('SERVING');
    } finally {
      health.close();
    }
  });
});

describe('a service without an internal credential', () => {
  it('refuses to start rather than serve everyone', async () => {
    const svc = startModule(undefined, []);
    await expect(svc.start()).rejects.toThrow(/no internal credential given/);
    expect(() => svc.module.address).toThrow(/not started/);
    const empty = startModule({ internalToken: '', tls: undefined }, []);
    await expect(empty.start()).rejects.toThrow(/empty internal credential/);
  });

  it('refuses a streaming method it could not guard', () => {
    const streaming = {
      Watch: { ...FIND, requestStream: false, responseStream: true },
    } as unknown as grpc.ServiceDefinition;
    expect(() => requireInternalCredential(streaming, {}, TOKEN, createRootLogger('silent'))).toThrow(/Watch streams/);
  });
});

describe('mTLS between processes (QUARRY_GRPC_TLS_*)', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'q-mtls-'));
  const files = makeTlsFixtures(dir);
  const read = (f: string) => fs.readFileSync(f, 'utf8');
  const tls: GrpcTls = { ca: read(files.ca), cert: read(files.cert), key: read(files.key) };
  const svc = startModule({ internalToken: TOKEN, tls }, []);
  const clients: grpc.Client[] = [];
  const connect = (creds: grpc.ChannelCredentials) => {
    const c = new grpc.Client(tlsTarget(svc.module.address), creds, CLIENT_OPTIONS);
    clients.push(c);
    return c;
  };
  const call = (c: grpc.Client, internalToken = TOKEN) =>
    callUnary('query', c.getChannel(), FIND, forgedAdmin, { requestId: 'r', deadlineMs: 3000, internalToken });

  beforeAll(() => svc.start());
  afterAll(async () => {
    for (const c of clients) c.close();
    await svc.module.stop();
  });

  it('serves a client with a certificate of the deployment CA and the credential', async () => {
    const res = await call(connect(channelCredentials(tls)));
    expect(res.indexes.map((i) => i.name)).toContain(SECRET_INDEX);
  });

  it('still wants the credential from a client with a good certificate', async () => {
    await expect(call(connect(channelCredentials(tls)), 'k'.repeat(40))).rejects.toMatchObject({
      code: 'UNAUTHENTICATED',
    });
  });

  it('refuses, at the handshake, a client without a client certificate, one from another CA, and plaintext', async () => {
    const served = svc.served.length;
    const noClientCert = connect(grpc.credentials.createSsl(Buffer.from(tls.ca)));
    const foreign = connect(
      grpc.credentials.createSsl(
        Buffer.from(tls.ca),
        Buffer.from(read(files.foreignKey)),
        Buffer.from(read(files.foreignCert)),
      ),
    );
    const plaintext = connect(grpc.credentials.createInsecure());
    for (const c of [noClientCert, foreign, plaintext]) {
      // The right credential is sent: the refusal is the transport's.
      await expect(call(c)).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    }
    expect(svc.served.length).toBe(served);
  });

  it('keeps health reachable over TLS for a client of the deployment', async () => {
    const health = healthClient(tlsTarget(svc.module.address), channelCredentials(tls));
    try {
      expect(await checkHealth(health, '')).toBe('SERVING');
    } finally {
      health.close();
    }
  });
});
