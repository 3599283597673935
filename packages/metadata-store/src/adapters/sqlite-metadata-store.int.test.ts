import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { metadataStoreConformance } from '../metadata-store.conformance';
import { SqliteMetadataStore } from './sqlite-metadata-store.adapter';

describe('SqliteMetadataStore conformance', () => {
  metadataStoreConformance(async () => new SqliteMetadataStore(path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'q-meta-')), 'quarry.db')));
});

describe('SqliteMetadataStore across connections', () => {
  it('shows a revocation made by another connection (another process) on the next read', async () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'q-meta-')), 'quarry.db');
    const a = new SqliteMetadataStore(file);
    const b = new SqliteMetadataStore(file);
    const u = await a.createUser({ name: 'x', admin: false, indexes: [], realms: [] });
    const t = await a.createToken({ userId: u.id, hash: '01'.repeat(32), prefix: 'qk_', scopes: [], expiresAt: null });
    expect((await b.findTokenByHash(t.hash))?.revokedAt).toBeNull();
    expect((await b.findCredential(t.hash))?.owner?.status).toBe('active');
    await a.revokeToken(t.id);
    expect((await b.findTokenByHash(t.hash))?.revokedAt).not.toBeNull();
    expect((await b.findCredential(t.hash))?.token.revokedAt).not.toBeNull();
    await a.setUserStatus('x', 'disabled');
    expect((await b.findCredential(t.hash))?.owner?.status).toBe('disabled');
    await a.close();
    await b.close();
  });
});
