import dns from 'node:dns';
import * as grpc from '@grpc/grpc-js';
import { silentLogger } from '@quarry/logger';
import { CLIENT_OPTIONS, callUnary, dialTarget } from './grpc-client';
import { bindGrpcServer, createGrpcServer, shutdownGrpcServer, unary } from './grpc-server';
import { loadQuarryProto } from './proto';
import type { FindIndexesRequest } from './generated/index';

/**
 * A Kubernetes headless Service is a DNS name answering with the address of every ready pod. Here the
 * name is made up and the lookup grpc-js's DNS resolver makes (dns.promises.lookup) answers with two
 * loopback addresses, a "pod" listening on each, on the same port as pods do.
 */
const v1 = loadQuarryProto().quarry.v1;
const FIND = v1.QueryService.service.FindIndexes;
const SERVICE_NAME = 'query.quarry.svc.cluster.test';
const TOKEN = 'k'.repeat(32);
const CALLS = 20;

describe("the gateway's clients against a name with several pods behind it", () => {
  const log = silentLogger();
  const pods = ['127.0.0.1', '127.0.0.2'].map((ip) => ({ ip, server: createGrpcServer(), calls: 0 }));
  let port = 0;
  let lookup: jest.SpyInstance;
  const clients: grpc.Client[] = [];

  beforeAll(async () => {
    for (const pod of pods) {
      pod.server.addService(v1.QueryService.service, {
        FindIndexes: unary<FindIndexesRequest, unknown>(log, 'FindIndexes', async () => {
          pod.calls++;
          return { indexes: [], nextCursor: pod.ip };
        }),
      });
    }
    const first = await bindGrpcServer(pods[0].server, '127.0.0.1:0');
    port = Number(first.slice(first.lastIndexOf(':') + 1));
    await bindGrpcServer(pods[1].server, `127.0.0.2:${port}`);

    const realLookup = dns.promises.lookup.bind(dns.promises);
    lookup = jest.spyOn(dns.promises, 'lookup').mockImplementation(((hostname: string, options?: unknown) => {
      if (hostname === SERVICE_NAME) return Promise.resolve(pods.map((p) => ({ address: p.ip, family: 4 })));
      return realLookup(hostname, options as dns.LookupOptions);
    }) as typeof dns.promises.lookup);
  });

  afterAll(async () => {
    lookup.mockRestore();
    for (const c of clients) c.close();
    await Promise.all(pods.map((p) => shutdownGrpcServer(p.server, 1000)));
  });

  beforeEach(() => {
    for (const p of pods) p.calls = 0;
  });

  /**
   * Sequential calls (as one gateway request after another), once the connections are open: with
   * `warmEvery`, once every pod has answered a call (round_robin connects to every address at once, but on
   * a loaded machine the second may be well behind the first); without, after one call and a pause.
   */
  async function callsPerPod(options: grpc.ChannelOptions, warmEvery: boolean): Promise<number[]> {
    const client = new grpc.Client(dialTarget(`${SERVICE_NAME}:${port}`), grpc.credentials.createInsecure(), options);
    clients.push(client);
    const call = () =>
      callUnary('query', client.getChannel(), FIND, {}, { requestId: 'r', deadlineMs: 2000, internalToken: TOKEN });
    await call();
    if (warmEvery) {
      for (const deadline = Date.now() + 20_000; pods.some((p) => p.calls === 0) && Date.now() < deadline;) {
        await new Promise((r) => setTimeout(r, 20));
        await call();
      }
    } else {
      // pick_first keeps to one address however long this waits: no wait can make that test pass wrongly.
      await new Promise((r) => setTimeout(r, 200));
    }
    for (const p of pods) p.calls = 0;
    for (let i = 0; i < CALLS; i++) await call();
    return pods.map((p) => p.calls);
  }

  it('spreads calls evenly over every address the name resolves to', async () => {
    const counts = await callsPerPod(CLIENT_OPTIONS, true);
    expect(lookup).toHaveBeenCalledWith(SERVICE_NAME, expect.objectContaining({ all: true }));
    expect(counts).toEqual([CALLS / 2, CALLS / 2]);
  });

  it("sends every call to one pod without the policy (grpc-js's default pick_first): what the gateway did before", async () => {
    const withoutPolicy: grpc.ChannelOptions = { ...CLIENT_OPTIONS };
    delete withoutPolicy['grpc.service_config'];
    const counts = await callsPerPod(withoutPolicy, false);
    expect([...counts].sort((a, b) => a - b)).toEqual([0, CALLS]);
  });

  it('reaches a single address as before, by IP or by name', async () => {
    for (const target of [`127.0.0.2:${port}`, `localhost:${port}`]) {
      const client = new grpc.Client(dialTarget(target), grpc.credentials.createInsecure(), CLIENT_OPTIONS);
      clients.push(client);
      const res = await callUnary(
        'query',
        client.getChannel(),
        FIND,
        {},
        { requestId: 'r', deadlineMs: 2000, internalToken: TOKEN },
      );
      expect({ target, answeredBy: res.nextCursor }).toEqual({
        target,
        answeredBy: target.startsWith('localhost') ? '127.0.0.1' : '127.0.0.2',
      });
    }
  });
});
