import { MongoClient, type Db } from 'mongodb';
import { ComposedMetadataStore } from './composed-metadata-store';
import { MongoAuditLog } from './mongo-audit-log.adapter';
import { openCollections } from './mongo-collections';
import { MongoIdentityStore } from './mongo-identity-store.adapter';
import { MongoIndexCatalog } from './mongo-index-catalog.adapter';

/**
 * Production metadata on MongoDB: one client, its collections and indexes made once (mongo-collections),
 * that each port's part (identities, catalog, audit) works on.
 */
export class MongoMetadataStore extends ComposedMetadataStore {
  private constructor(
    private readonly client: MongoClient,
    identities: MongoIdentityStore,
    catalog: MongoIndexCatalog,
    audit: MongoAuditLog,
  ) {
    super(identities, catalog, audit);
  }

  static async connect(url: string, dbName: string): Promise<MongoMetadataStore> {
    const client = new MongoClient(url, { serverSelectionTimeoutMS: 5000, writeConcern: { w: 'majority' } });
    await client.connect();
    const db: Db = client.db(dbName);
    const c = await openCollections(db);
    // A standalone server has no transactions: there a publish relies on the catalog's repair instead.
    const hello = (await db.admin().command({ hello: 1 })) as { setName?: string; msg?: string };
    const transactions = hello.setName !== undefined || hello.msg === 'isdbgrid';
    return new MongoMetadataStore(
      client,
      new MongoIdentityStore(c.users, c.tokens, c.embeds),
      new MongoIndexCatalog(client, c.indexes, c.versions, c.locks, transactions),
      new MongoAuditLog(c.audit),
    );
  }

  async ping(): Promise<void> {
    await this.client.db('admin').command({ ping: 1 });
  }

  async close(): Promise<void> {
    await this.client.close();
  }
}
