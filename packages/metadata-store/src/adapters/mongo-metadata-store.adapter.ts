import { randomUUID } from 'node:crypto';
import { MongoClient, MongoServerError, type ClientSession, type Collection, type Db } from 'mongodb';
import { AppError } from '@quarry/errors';
import type {
  Credential,
  EmbedTokenRecord,
  NewEmbedToken,
  NewToken,
  NewUser,
  TokenRecord,
  User,
  UserStatus,
} from '../domain/identity';
import type { IndexCatalog, IndexEntry, IndexPublication, LoadLock, LoadLockHolder } from '../ports/index-catalog.port';
import { holderIsLive, lockHeldMessage } from './lock-holder';
import type { MetadataStore } from '../ports/metadata-store.port';
import type { AuditEntry, AuditLog, AuditQuery } from '../ports/audit-log.port';

/** `seq` orders entries of the same millisecond as they were appended. */
type AuditDoc = AuditEntry & { seq: number };

function toAudit({ seq: _seq, ...rest }: AuditDoc & { _id?: unknown }): AuditEntry {
  const { _id: _ignored, ...entry } = rest as AuditEntry & { _id?: unknown };
  return entry;
}

type UserDoc = Omit<User, 'id'> & { _id: string };
type TokenDoc = Omit<TokenRecord, 'id'> & { _id: string };
/** `expireAt` (the same instant as `expiresAt`) lets MongoDB's TTL monitor purge it on its own as well. */
type EmbedTokenDoc = Omit<EmbedTokenRecord, 'id'> & { _id: string; expireAt: Date };

function toEmbedToken({ _id, expireAt: _ttl, ...rest }: EmbedTokenDoc): EmbedTokenRecord {
  return { id: _id, ...rest };
}
/** `droppedAt` marks a tombstone: the document keeps its version so the name's versions never repeat. */
type IndexDoc = IndexEntry & { _id: string; droppedAt?: string | null };
/** One published version, `_id` "name@version", kept until released (saved reports run on it). */
type IndexVersionDoc = IndexEntry & { _id: string };
interface LockDoc {
  _id: string;
  holder: string;
  host: string;
  pid: number;
  acquiredAt: string;
  expiresAt: Date;
}

function toIndex({ _id: _ignored, droppedAt: _dropped, ...rest }: IndexDoc): IndexEntry {
  return rest;
}

function versionEntry({ _id: _ignored, ...rest }: IndexVersionDoc): IndexEntry {
  return rest;
}

const LIVE = { droppedAt: null };

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
export class MongoMetadataStore implements MetadataStore, IndexCatalog, AuditLog {
  private seq = 0;

  private constructor(
    private readonly client: MongoClient,
    private readonly users: Collection<UserDoc>,
    private readonly tokens: Collection<TokenDoc>,
    private readonly indexes: Collection<IndexDoc>,
    private readonly locks: Collection<LockDoc>,
    private readonly versions: Collection<IndexVersionDoc>,
    private readonly audit: Collection<AuditDoc>,
    private readonly embeds: Collection<EmbedTokenDoc>,
    /** A replica set or mongos: a publish's two writes go in one transaction. */
    private readonly transactions: boolean,
  ) {}

  static async connect(url: string, dbName: string): Promise<MongoMetadataStore> {
    const client = new MongoClient(url, { serverSelectionTimeoutMS: 5000, writeConcern: { w: 'majority' } });
    await client.connect();
    const db: Db = client.db(dbName);
    const users = db.collection<UserDoc>('users');
    const tokens = db.collection<TokenDoc>('tokens');
    await users.createIndex({ name: 1 }, { unique: true });
    await tokens.createIndex({ hash: 1 }, { unique: true });
    const versions = db.collection<IndexVersionDoc>('index_versions');
    await versions.createIndex({ name: 1, version: 1 });
    const audit = db.collection<AuditDoc>('audit');
    await audit.createIndex({ time: -1, seq: -1 });
    const embeds = db.collection<EmbedTokenDoc>('embed_tokens');
    await embeds.createIndex({ expireAt: 1 }, { expireAfterSeconds: 0 });
    // A standalone server has no transactions: there a publish relies on the repair below instead.
    const hello = (await db.admin().command({ hello: 1 })) as { setName?: string; msg?: string };
    return new MongoMetadataStore(
      client,
      users,
      tokens,
      db.collection<IndexDoc>('indexes'),
      db.collection<LockDoc>('index_locks'),
      versions,
      audit,
      embeds,
      hello.setName !== undefined || hello.msg === 'isdbgrid',
    );
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

  async findCredentialById(id: string): Promise<Credential | null> {
    const [doc] = await this.tokens
      .aggregate<TokenDoc & { owner: UserDoc[] }>([
        { $match: { _id: id } },
        { $limit: 1 },
        { $lookup: { from: 'users', localField: 'userId', foreignField: '_id', as: 'owner' } },
      ])
      .toArray();
    if (!doc) return null;
    const { owner, ...token } = doc;
    return { token: toToken(token), owner: owner[0] ? toUser(owner[0]) : null };
  }

  async appendAudit(entries: readonly AuditEntry[]): Promise<void> {
    if (entries.length === 0) return;
    // Date.now() and a counter: increasing within this process, and ordered by time across processes.
    const base = Date.now() * 1000;
    const docs = entries.map((e) => ({ ...e, seq: base + (this.seq++ % 1000) }));
    await this.audit.insertMany(docs, { ordered: true });
  }

  async listAudit(query: AuditQuery): Promise<AuditEntry[]> {
    const filter: Record<string, unknown> = {};
    if (query.userName !== undefined) filter.userName = query.userName;
    if (query.since !== undefined) filter.time = { $gte: query.since };
    if (query.method !== undefined) filter.method = query.method;
    const docs = await this.audit.find(filter).sort({ time: -1, seq: -1 }).limit(query.limit).toArray();
    return docs.map(toAudit);
  }

  async purgeAudit(before: string): Promise<number> {
    return (await this.audit.deleteMany({ time: { $lt: before } })).deletedCount;
  }

  async recordEmbedToken(token: NewEmbedToken): Promise<EmbedTokenRecord> {
    const doc: EmbedTokenDoc = {
      _id: token.id,
      userId: token.userId,
      tokenId: token.tokenId,
      createdAt: new Date().toISOString(),
      expiresAt: token.expiresAt,
      revokedAt: null,
      expireAt: new Date(token.expiresAt),
    };
    try {
      await this.embeds.insertOne({ ...doc });
    } catch (err) {
      if (isDuplicateKey(err)) throw AppError.conflict('An embed token with this id already exists');
      throw err;
    }
    return toEmbedToken(doc);
  }

  async countLiveEmbedTokens(userId: string, now: string): Promise<number> {
    return this.embeds.countDocuments({ userId, expiresAt: { $gt: now }, revokedAt: null });
  }

  async findEmbedToken(id: string): Promise<EmbedTokenRecord | null> {
    // The TTL monitor runs once a minute: an expired document may still be there.
    const doc = await this.embeds.findOne({ _id: id, expiresAt: { $gt: new Date().toISOString() } });
    return doc ? toEmbedToken(doc) : null;
  }

  async revokeEmbedToken(id: string, userId?: string): Promise<EmbedTokenRecord> {
    const now = new Date().toISOString();
    const mine = { _id: id, expiresAt: { $gt: now }, ...(userId === undefined ? {} : { userId }) };
    // Only an unrevoked one gets a time, so a second revoke keeps the first.
    await this.embeds.updateOne({ ...mine, revokedAt: null }, { $set: { revokedAt: now } });
    const doc = await this.embeds.findOne(mine);
    if (!doc) throw AppError.notFound('Embed token not found');
    return toEmbedToken(doc);
  }

  async purgeEmbedTokens(now: string): Promise<number> {
    return (await this.embeds.deleteMany({ expiresAt: { $lte: now } })).deletedCount;
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
    if (!this.transactions) return this.publishWrites(entry);
    // The live pointer and its version document together: a crash between two separate writes left the
    // live version without the document saved reports and INDEXES.VERSIONS read.
    return this.client.withSession((session) => session.withTransaction(() => this.publishWrites(entry, session)));
  }

  private async publishWrites(
    entry: IndexPublication,
    session?: ClientSession,
  ): Promise<{ entry: IndexEntry; previous: IndexEntry | null }> {
    const updatedAt = new Date().toISOString();
    const fields = {
      name: entry.name,
      description: entry.description,
      fields: entry.fields,
      views: entry.views,
      recordCount: entry.recordCount,
      snapshot: entry.snapshot,
      updatedAt,
    };
    // One atomic update: $inc hands concurrent publishers distinct versions, and the new entry is the
    // one this update wrote (from the document before it), not a second read a concurrent publish could change.
    const before = await this.indexes.findOneAndUpdate(
      { _id: entry.name },
      { $set: { ...fields, droppedAt: null }, $inc: { version: 1 } },
      { upsert: true, returnDocument: 'before', session },
    );
    // Without a transaction, a publish that crashed after its first write left its version without a
    // document: the version it replaces gets one now, from the live entry that still describes it.
    if (before && !before.droppedAt) await this.keepVersion(toIndex(before), session);
    const published: IndexEntry = { ...fields, version: (before?.version ?? 0) + 1 };
    await this.keepVersion(published, session);
    const previous = before && !before.droppedAt ? toIndex(before) : null;
    return { entry: published, previous };
  }

  /** The version's document, written once: an existing one is never replaced. */
  private async keepVersion(entry: IndexEntry, session?: ClientSession): Promise<void> {
    const { name, version, ...rest } = entry;
    await this.versions.updateOne(
      { _id: `${name}@${version}` },
      { $setOnInsert: { ...rest, name, version } },
      { upsert: true, session },
    );
  }

  async getIndex(name: string): Promise<IndexEntry | null> {
    const doc = await this.indexes.findOne({ _id: name, ...LIVE });
    return doc ? toIndex(doc) : null;
  }

  async listIndexes(): Promise<IndexEntry[]> {
    return (await this.indexes.find(LIVE).sort({ _id: 1 }).toArray()).map(toIndex);
  }

  async dropIndex(name: string): Promise<IndexEntry> {
    const doc = await this.indexes.findOneAndUpdate(
      { _id: name, ...LIVE },
      { $set: { droppedAt: new Date().toISOString() } },
      { returnDocument: 'before' },
    );
    if (!doc) throw AppError.notFound(`Index "${name}" not found`);
    await this.versions.deleteMany({ name });
    return toIndex(doc);
  }

  async getIndexVersion(name: string, version: number): Promise<IndexEntry | null> {
    const live = await this.indexes.findOne({ _id: name, ...LIVE });
    if (!live) return null;
    const doc = await this.versions.findOne({ _id: `${name}@${version}` });
    // The live version is described by its index document too (a publish that crashed before its second write).
    return doc ? versionEntry(doc) : live.version === version ? toIndex(live) : null;
  }

  async listIndexVersions(name: string): Promise<IndexEntry[]> {
    const live = await this.indexes.findOne({ _id: name, ...LIVE });
    if (!live) return [];
    const kept = (await this.versions.find({ name }).sort({ version: 1 }).toArray()).map(versionEntry);
    return kept.some((v) => v.version === live.version) ? kept : [...kept, toIndex(live)];
  }

  async releaseIndexVersions(name: string, versions: readonly number[]): Promise<void> {
    await this.versions.deleteMany({ _id: { $in: versions.map((v) => `${name}@${v}`) } });
  }

  async acquireLoadLock(name: string, holder: LoadLockHolder, leaseMs: number): Promise<LoadLock> {
    const now = Date.now();
    const held = await this.locks.findOne({ _id: name });
    if (held && held.holder !== holder.id && holderIsLive(held, held.expiresAt.getTime(), now)) {
      throw AppError.conflict(lockHeldMessage(name, held, held.acquiredAt));
    }
    const mine = {
      holder: holder.id,
      host: holder.host,
      pid: holder.pid,
      acquiredAt: new Date(now).toISOString(),
      expiresAt: new Date(now + leaseMs),
    };
    try {
      // Takes over only the lock seen above (same holder id), so two takers cannot both win.
      if (held) {
        const res = await this.locks.updateOne({ _id: name, holder: held.holder }, { $set: mine });
        if (res.modifiedCount === 0) throw AppError.conflict(lockHeldMessage(name, held, held.acquiredAt));
      } else {
        await this.locks.insertOne({ _id: name, ...mine });
      }
    } catch (err) {
      if (isDuplicateKey(err))
        throw AppError.conflict(
          `Index "${name}" is being loaded or dropped by another process; try again when it has finished`,
        );
      throw err;
    }
    return {
      renew: async () => {
        const res = await this.locks.updateOne(
          { _id: name, holder: holder.id },
          { $set: { expiresAt: new Date(Date.now() + leaseMs) } },
        );
        if (res.matchedCount === 0)
          throw AppError.conflict(
            `The load lock of index "${name}" was lost (its lease ran out and another process took it over)`,
          );
      },
      release: async () => {
        await this.locks.deleteOne({ _id: name, holder: holder.id });
      },
    };
  }

  async ping(): Promise<void> {
    await this.client.db('admin').command({ ping: 1 });
  }

  async close(): Promise<void> {
    await this.client.close();
  }
}
