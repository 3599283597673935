import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Server } from 'node:http';
import { silentLogger } from '@quarry/logger';
import { generateTokenValue, hashToken, type MetadataStore } from '@quarry/metadata-store';
import { SqliteMetadataStore } from '@quarry/metadata-store/sqlite';
import { AuthenticateUseCase } from '../domain/authenticate.use-case';
import { DispatchMethodUseCase } from '../domain/dispatch-method.use-case';
import { createMethodHandlers } from '../domain/handlers/method-handlers';
import type { ServiceClients } from '../ports/service-clients.port';
import { createHttpApp } from './http-app';

// A service adapter with a genuine bug: every call throws a TypeError.
const brokenServices = new Proxy({} as ServiceClients, {
  get: () => () => {
    throw new TypeError("Cannot read properties of undefined (reading 'records')");
  },
});

describe('gateway transport on internal faults', () => {
  let server: Server;
  let url: string;
  let token: string;
  let store: MetadataStore;
  let failStore = false;

  beforeAll(async () => {
    const sqlite = new SqliteMetadataStore(path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'q-gw-')), 'quarry.db'));
    store = sqlite;
    const user = await sqlite.createUser({ name: 'u', admin: false, indexes: ['*'], realms: [] });
    token = generateTokenValue();
    await sqlite.createToken({
      userId: user.id,
      hash: hashToken(token),
      prefix: 'qk_',
      scopes: ['indexes:read'],
      expiresAt: null,
    });
    const flaky = new Proxy(sqlite, {
      get(target, prop, receiver) {
        if (prop === 'findCredential' && failStore) return async () => Promise.reject(new Error('disk I/O error'));
        const value = Reflect.get(target, prop, receiver) as unknown;
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const app = createHttpApp({
      authenticate: new AuthenticateUseCase(flaky),
      dispatch: new DispatchMethodUseCase(createMethodHandlers({ services: brokenServices })),
      checkReady: () => flaky.ping(),
      log: silentLogger(),
      bodyLimitBytes: 1_048_576,
      bodyTimeoutMs: 10_000,
    });
    server = app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`;
  });

  afterAll(async () => {
    await new Promise((r) => server.close(r));
    await store.close();
  });

  const call = () =>
    fetch(url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` },
      body: JSON.stringify({ jsonrpc: '2.0', id: 'fault', method: 'INDEXES.FIND' }),
    });

  it('-32603 with HTTP 200 and the id echoed when a service call fails unexpectedly, without leaking the fault', async () => {
    const res = await call();
    expect(res.status).toBe(200);
    const body = (await res.json()) as {
      id: unknown;
      error: { code: number; message: string; data: { detail: string } };
    };
    expect(body.id).toBe('fault');
    expect(body.error.code).toBe(-32603);
    expect(body.error.message).toBe('Internal error');
    expect(JSON.stringify(body)).not.toContain('Cannot read properties');
  });

  it('-32603 with HTTP 500 and id null when the token store fails before the id is read', async () => {
    failStore = true;
    try {
      const res = await call();
      expect(res.status).toBe(500);
      const body = (await res.json()) as { id: unknown; error: { code: number } };
      expect(body).toMatchObject({ id: null, error: { code: -32603 } });
      expect(JSON.stringify(body)).not.toContain('disk I/O');
    } finally {
      failStore = false;
    }
    expect((await call()).status).toBe(200);
  });
});

describe('token-less requests: rpc.discover is read, nothing else costs more than a 401', () => {
  let server: Server;
  let port: number;

  beforeAll(async () => {
    const sqlite = new SqliteMetadataStore(path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'q-gw-')), 'quarry.db'));
    const app = createHttpApp({
      authenticate: new AuthenticateUseCase(sqlite),
      dispatch: new DispatchMethodUseCase(createMethodHandlers({ services: brokenServices })),
      checkReady: () => sqlite.ping(),
      log: silentLogger(),
      bodyLimitBytes: 1_048_576,
      bodyTimeoutMs: 10_000,
    });
    server = app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    port = (server.address() as AddressInfo).port;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  /** Sends headers, then `body` one byte every `gapMs`; resolves with the status line and the time it took. */
  async function trickle(body: string, gapMs: number): Promise<{ status: number; ms: number }> {
    const net = await import('node:net');
    const started = Date.now();
    return new Promise((resolve, reject) => {
      const socket = net.connect(port, '127.0.0.1', () => {
        socket.write(
          `POST /api/v1 HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`,
        );
        let i = 0;
        const timer = setInterval(() => {
          if (i >= body.length || socket.destroyed) return clearInterval(timer);
          socket.write(body[i++]);
        }, gapMs);
        socket.once('data', (d: Buffer) => {
          clearInterval(timer);
          socket.destroy();
          resolve({ status: Number(d.toString().split(' ')[1]), ms: Date.now() - started });
        });
        socket.once('close', () => clearInterval(timer));
      });
      socket.on('error', reject);
    });
  }

  it('answers rpc.discover without a token', async () => {
    const res = await fetch(`http://127.0.0.1:${port}/api/v1`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: '{"jsonrpc":"2.0","id":3,"method":"rpc.discover"}',
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { result: { openrpc: string } }).result.openrpc).toBe('1.3.2');
  });

  it('gives any other method its 401, also with a body of 2 MB', async () => {
    const small = await fetch(`http://127.0.0.1:${port}/api/v1`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: '{"jsonrpc":"2.0","id":3,"method":"INDEXES.FIND"}',
    });
    expect(small.status).toBe(401);
    const big = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'rpc.discover',
      params: { pad: 'x'.repeat(2_000_000) },
    });
    // Either the 401 arrives, or the server closes a connection still sending more than it will read;
    // never a 2xx, a 413 or a 500, and the server answers the next call.
    const outcome = await fetch(`http://127.0.0.1:${port}/api/v1`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: big,
    }).then(
      (res) => `status ${res.status}`,
      (err: Error & { cause?: { code?: string } }) => `closed ${err.cause?.code ?? err.message}`,
    );
    expect(outcome).toMatch(/^(status 401|closed (ECONNRESET|EPIPE|UND_ERR_SOCKET|other side closed))$/);
    const after = await fetch(`http://127.0.0.1:${port}/api/v1`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: '{"jsonrpc":"2.0","id":4,"method":"INDEXES.FIND"}',
    });
    expect(after.status).toBe(401);
  });

  it('does not wait on a client that trickles its body: the 401 comes within the 5 s discovery budget', async () => {
    const { status, ms } = await trickle(
      JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'INDEXES.FIND', params: { pad: 'x'.repeat(500) } }),
      200,
    );
    expect(status).toBe(401);
    expect(ms).toBeLessThan(7000);
  }, 15000);
});
