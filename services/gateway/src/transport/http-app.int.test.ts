import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Server } from 'node:http';
import { silentLogger } from '@quarry/logger';
import { generateTokenValue, hashToken, type MetadataStore } from '@quarry/metadata-store';
import { SqliteMetadataStore } from '@quarry/metadata-store/sqlite';
import { AuthenticateUseCase } from '../domain/authenticate.use-case';
import { CallMethodUseCase } from '../domain/call-method.use-case';
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
    await sqlite.createToken({ userId: user.id, hash: hashToken(token), prefix: 'qk_', scopes: ['indexes:read'], expiresAt: null });
    const flaky = new Proxy(sqlite, {
      get(target, prop, receiver) {
        if (prop === 'findCredential' && failStore) return async () => Promise.reject(new Error('disk I/O error'));
        const value = Reflect.get(target, prop, receiver) as unknown;
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const app = createHttpApp({
      authenticate: new AuthenticateUseCase(flaky),
      callMethod: new CallMethodUseCase(brokenServices),
      checkReady: () => flaky.ping(),
      log: silentLogger(),
      bodyLimitBytes: 1_048_576,
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
    const body = (await res.json()) as { id: unknown; error: { code: number; message: string; data: { detail: string } } };
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
