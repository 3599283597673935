import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { IndexEntry } from '@quarry/metadata-store';
import { parseQuery } from '@quarry/query-language';
import { SnapshotEngine } from '@quarry/snapshots';
import { TypesenseSearchIndex } from './typesense-search-index.adapter';

/*
 * With the real typesense-js client over real sockets: a local HTTP server plays
 * Typesense (no Typesense is needed to see how often the client sends a request).
 */
const entry: IndexEntry = {
  name: 'people',
  description: '',
  fields: [{ name: 'name', type: 'string' }],
  views: [],
  recordCount: 1,
  version: 1,
  snapshot: 'unused',
  updatedAt: '',
};
const plan = {
  where: parseQuery('name:ada', { fields: [{ name: 'name', type: 'string' }], now: 0 }),
  sort: [],
  offset: 0,
  limit: 10,
};

function fakeTypesense(answer: boolean): { server: http.Server; requests: () => number } {
  let requests = 0;
  const server = http.createServer((req, res) => {
    requests++;
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      if (!answer) return; // hangs, as a search stuck behind a slow one does
      const searches = (JSON.parse(body) as { searches: unknown[] }).searches;
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ results: searches.map(() => ({ found: 0, hits: [] })) }));
    });
  });
  return { server, requests: () => requests };
}

const listen = (server: http.Server, port = 0) =>
  new Promise<number>((resolve) =>
    server.listen(port, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)),
  );
const close = (server: http.Server) =>
  new Promise<void>((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });

describe('Typesense requests sent again', () => {
  let engine: SnapshotEngine;
  beforeAll(() => {
    engine = new SnapshotEngine(fs.mkdtempSync(path.join(os.tmpdir(), 'q-ts-retry-')));
  });
  afterAll(() => engine.close());

  it('sends a search that timed out once, and fails UNAVAILABLE', async () => {
    const fake = fakeTypesense(false);
    const port = await listen(fake.server);
    const index = new TypesenseSearchIndex({ url: `http://127.0.0.1:${port}`, apiKey: 'k' }, engine, {
      timeoutSeconds: 0.3,
      retry: { retries: 2, intervalMs: 10 },
    });
    try {
      await expect(index.search(entry, plan)).rejects.toMatchObject({ code: 'UNAVAILABLE' });
      // Well past what two more attempts would take: none came.
      await new Promise((r) => setTimeout(r, 500));
      expect(fake.requests()).toBe(1);
    } finally {
      await close(fake.server);
    }
  });

  it('sends a search again when the connection was refused, and answers once Typesense listens', async () => {
    const probe = http.createServer();
    const port = await listen(probe);
    await close(probe);
    const fake = fakeTypesense(true);
    const index = new TypesenseSearchIndex({ url: `http://127.0.0.1:${port}`, apiKey: 'k' }, engine, {
      timeoutSeconds: 2,
      retry: { retries: 2, intervalMs: 400 },
    });
    // The first attempt finds nothing listening; Typesense comes up before the second.
    const started = new Promise((r) => setTimeout(r, 100)).then(() => listen(fake.server, port));
    try {
      await expect(index.search(entry, plan)).resolves.toEqual({ total: 0, recordsJson: '[]', engine: 'typesense' });
      await started;
      expect(fake.requests()).toBe(1);
    } finally {
      await close(fake.server);
    }
  });
});
