import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { silentLogger } from '@quarry/logger';
import type { GatewayConfig } from './config';
import type { GatewayCallsModule } from './gateway-calls.module';
import { GatewayModule } from './module';

/** The gateway calls as the HTTP module uses them, recording the order in which it asks for what. */
function recordingCalls(order: string[]): GatewayCallsModule {
  const stub = {
    calls: { authenticate: {}, dispatch: {}, audit: undefined, exports: undefined, signedLinks: undefined },
    store: { ping: async () => undefined },
    useBoundUrl: (url: string) => order.push(`bound ${url.startsWith('http://127.0.0.1:') ? 'loopback' : url}`),
    takeExportJobs: () => order.push('take export jobs'),
    schedulesReady: async () => undefined,
  };
  return stub as unknown as GatewayCallsModule;
}

const config = (port: number) =>
  ({
    host: '127.0.0.1',
    port,
    bodyLimitBytes: 1_048_576,
    bodyTimeoutMs: 10_000,
    corsOrigins: [],
    serviceAddrs: {},
  }) as unknown as GatewayConfig;

/*
 * A gateway's export worker takes jobs only once the HTTP server listens: a process that fails to start
 * (here, its port taken) must never take a job off the deployment's queue and then die holding it.
 */
describe('GatewayModule start', () => {
  it('takes export jobs once it listens, after its address is known', async () => {
    const order: string[] = [];
    const gateway = new GatewayModule(config(0), recordingCalls(order), silentLogger());
    await gateway.start();
    try {
      expect(order).toEqual(['bound loopback', 'take export jobs']);
    } finally {
      await gateway.stop();
    }
  });

  it('takes none when it cannot listen', async () => {
    const taken: Server = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const order: string[] = [];
    const gateway = new GatewayModule(
      config((taken.address() as AddressInfo).port),
      recordingCalls(order),
      silentLogger(),
    );
    try {
      await expect(gateway.start()).rejects.toMatchObject({ code: 'EADDRINUSE' });
      expect(order).toEqual([]);
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });
});
