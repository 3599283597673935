import { randomUUID } from 'node:crypto';
import { MongoClient, MongoServerError, type Collection, type Db } from 'mongodb';
import { AppError } from '@quarry/errors';
import type { Credential, NewToken, NewUser, TokenRecord, User, UserStatus } from '../domain/identity';
import type { IndexCatalog, IndexEntry, IndexPublication } from '../ports/index-catalog.port';
import type { MetadataStore } from '../ports/metadata-store.port';

type UserDoc = Omit<User, 'id'> & { _id: string };
type TokenDoc = Omit<TokenRecord, 'id'> & { _id: string };
type IndexDoc = IndexEntry & { _id: string };

function toIndex({ _id: _ignored, ...rest }: IndexDoc): IndexEntry {
  return rest;
}

function toUser({ _id, ...rest }: UserDoc): User {
  return { id: _id, ...rest };
}

function toToken({ _id, ...rest }: TokenDoc): TokenRecord {
  return { id: _id, ...rest };
}

function isDuplicateKey(err: unknown): boolean {
  return err instanceof MongoServerError && err.code === 11000;
}

/** Production metadata on MongoDB: unique indexes enforce what the port promises across processes. */
export class MongoMetadataStore implements MetadataStore, IndexCatalog {
  private constructor(
    private readonly client: MongoClient,
    private readonly users: Collection<UserDoc>,
    private readonly tokens: Collection<TokenDoc>,
    private readonly indexes: Collection<IndexDoc>,
  ) {}

  static async connect(url: string, dbName: string): Promise<MongoMetadataStore> {
    const client = new MongoClient(url, { serverSelectionTimeoutMS: 5000, writeConcern: { w: 'majority' } });
    await client.connect();
    const db: Db = client.db(dbName);
    const users = db.collection<UserDoc>('users');
    const tokens = db.collection<TokenDoc>('tokens');
    await users.createIndex({ name: 1 }, { unique: true });
    await tokens.createIndex({ hash: 1 }, { unique: true });
    return new MongoMetadataStore(client, users, tokens, db.collection<IndexDoc>('indexes'));
  }

  async createUser(user: NewUser): Promise<User> {
    const doc: UserDoc = {
      _id: randomUUID(),
      name: user.name,
      status: 'active',
      admin: user.admin,
      indexes: [...user.indexes],
      realms: user.realms.map((r) => ({ ...r })),
      createdAt: new Date().toISOString(),
    };
    try {
      await this.users.insertOne({ ...doc });
    } catch (err) {
      if (isDuplicateKey(err)) throw AppError.conflict(`User "${user.name}" already exists`);
      throw err;
    }
    return toUser(doc);
  }

  async findUserByName(name: string): Promise<User | null> {
    const doc = await this.users.findOne({ name });
    return doc ? toUser(doc) : null;
  }

  async listUsers(): Promise<User[]> {
    return (await this.users.find().sort({ name: 1 }).toArray()).map(toUser);
  }

  async setUserStatus(name: string, status: UserStatus): Promise<User> {
    const doc = await this.users.findOneAndUpdate({ name }, { $set: { status } }, { returnDocument: 'after' });
    if (!doc) throw AppError.notFound(`User "${name}" not found`);
    return toUser(doc);
  }

  async deleteUser(name: string): Promise<void> {
    const res = await this.users.deleteOne({ name });
    if (res.deletedCount === 0) throw AppError.notFound(`User "${name}" not found`);
  }

  async createToken(token: NewToken): Promise<TokenRecord> {
    const doc: TokenDoc = {
      _id: randomUUID(),
      userId: token.userId,
      hash: token.hash,
      prefix: token.prefix,
      scopes: [...token.scopes],
      createdAt: new Date().toISOString(),
      expiresAt: token.expiresAt,
      revokedAt: null,
    };
    try {
      await this.tokens.insertOne({ ...doc });
    } catch (err) {
      if (isDuplicateKey(err)) throw AppError.conflict('A token with this hash already exists');
      throw err;
    }
    return toToken(doc);
  }

  async findTokenByHash(hash: string): Promise<TokenRecord | null> {
    const doc = await this.tokens.findOne({ hash });
    return doc ? toToken(doc) : null;
  }

  async findCredential(hash: string): Promise<Credential | null> {
    // One round trip: the owner joins in on the server.
    const [doc] = await this.tokens
      .aggregate<TokenDoc & { owner: UserDoc[] }>([
        { $match: { hash } },
        { $limit: 1 },
        { $lookup: { from: 'users', localField: 'userId', foreignField: '_id', as: 'owner' } },
      ])
      .toArray();
    if (!doc) return null;
    const { owner, ...token } = doc;
    return { token: toToken(token), owner: owner[0] ? toUser(owner[0]) : null };
  }

  async listTokens(): Promise<TokenRecord[]> {
    return (await this.tokens.find().sort({ createdAt: 1, _id: 1 }).toArray()).map(toToken);
  }

  async revokeToken(id: string): Promise<TokenRecord> {
    // Only unrevoked tokens get a time, so a second revoke keeps the first.
    await this.tokens.updateOne({ _id: id, revokedAt: null }, { $set: { revokedAt: new Date().toISOString() } });
    const doc = await this.tokens.findOne({ _id: id });
    if (!doc) throw AppError.notFound(`Token "${id}" not found`);
    return toToken(doc);
  }

  async publishIndex(entry: IndexPublication): Promise<{ entry: IndexEntry; previous: IndexEntry | null }> {
    // One atomic document update: $inc hands concurrent publishers distinct versions.
    const previous = await this.indexes.findOneAndUpdate(
      { _id: entry.name },
      {
        $set: {
          name: entry.name,
          description: entry.description,
          fields: entry.fields,
          views: entry.views,
          recordCount: entry.recordCount,
          snapshot: entry.snapshot,
          updatedAt: new Date().toISOString(),
        },
        $inc: { version: 1 },
      },
      { upsert: true, returnDocument: 'before' },
    );
    const current = await this.indexes.findOne({ _id: entry.name });
    if (!current) throw AppError.internal(`Index "${entry.name}" vanished while publishing`);
    return { entry: toIndex(current), previous: previous ? toIndex(previous) : null };
  }

  async getIndex(name: string): Promise<IndexEntry | null> {
    const doc = await this.indexes.findOne({ _id: name });
    return doc ? toIndex(doc) : null;
  }

  async listIndexes(): Promise<IndexEntry[]> {
    return (await this.indexes.find().sort({ _id: 1 }).toArray()).map(toIndex);
  }

  async dropIndex(name: string): Promise<IndexEntry> {
    const doc = await this.indexes.findOneAndDelete({ _id: name });
    if (!doc) throw AppError.notFound(`Index "${name}" not found`);
    return toIndex(doc);
  }

  async ping(): Promise<void> {
    await this.client.db('admin').command({ ping: 1 });
  }

  async close(): Promise<void> {
    await this.client.close();
  }
}
