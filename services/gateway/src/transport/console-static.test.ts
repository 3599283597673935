import fs from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import express from 'express';
import { CONSOLE_CSP, mountConsole, type ConsoleSignIn } from './console-static';

async function serve(dir: string | undefined, signIn?: ConsoleSignIn): Promise<{ base: string; server: Server }> {
  const app = express();
  mountConsole(app, dir, signIn);
  const server = createServer(app);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

describe('GET /console (static files)', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-console-static-'));
  fs.writeFileSync(path.join(dir, 'index.html'), '<!doctype html><title>c</title>');
  fs.writeFileSync(path.join(dir, 'console.js'), 'void 0;');
  fs.writeFileSync(path.join(dir, 'notes.txt'), 'not served: unknown type');
  fs.writeFileSync(path.join(os.tmpdir(), 'quarry-console-secret.js'), 'TOP-SECRET-CONTENT');
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('serves the page and its script with the strict CSP, nosniff and their types', async () => {
    const { base, server } = await serve(dir);
    try {
      for (const [p, type] of [
        ['/console', 'text/html'],
        ['/console/', 'text/html'],
        ['/console/console.js', 'text/javascript'],
      ]) {
        const res = await fetch(base + p);
        expect(res.status).toBe(200);
        expect(res.headers.get('content-type')).toContain(type);
        expect(res.headers.get('content-security-policy')).toBe(CONSOLE_CSP);
        expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      }
      expect(CONSOLE_CSP).not.toContain('unsafe');
    } finally {
      server.close();
    }
  });

  it('names the OpenID provider in sign-in.json only when one is configured, and lets the page reach that origin alone', async () => {
    const plain = await serve(dir);
    try {
      expect(await (await fetch(`${plain.base}/console/sign-in.json`)).json()).toEqual({});
    } finally {
      plain.server.close();
    }
    const { base, server } = await serve(dir, {
      issuer: 'https://login.example.com/realms/acme',
      clientId: 'quarry-console',
      audience: 'urn:quarry:api',
    });
    try {
      const res = await fetch(`${base}/console/sign-in.json`);
      expect(await res.json()).toEqual({
        issuer: 'https://login.example.com/realms/acme',
        clientId: 'quarry-console',
        resource: 'urn:quarry:api',
      });
      const csp = (await fetch(`${base}/console`)).headers.get('content-security-policy');
      expect(csp).toBe(CONSOLE_CSP.replace("connect-src 'self'", "connect-src 'self' https://login.example.com"));
    } finally {
      server.close();
    }
  });

  it('answers 404 for anything outside the files it read, traversal included', async () => {
    const { base, server } = await serve(dir);
    try {
      for (const p of [
        '/console/notes.txt',
        '/console/..%2fquarry-console-secret.js',
        '/console/%2e%2e/%2e%2e/etc/passwd',
        '/console/missing.js',
      ]) {
        const res = await fetch(base + p);
        expect([p, res.status]).toEqual([p, 404]);
        expect(await res.text()).not.toContain('TOP-SECRET-CONTENT');
      }
    } finally {
      server.close();
    }
  });

  it('answers a 404 naming why when the console is not built, never a 500', async () => {
    const { base, server } = await serve(path.join(dir, 'absent'));
    try {
      const res = await fetch(`${base}/console`);
      expect(res.status).toBe(404);
      expect(((await res.json()) as { detail: string }).detail).toMatch(/not built/);
    } finally {
      server.close();
    }
  });
});
