import { randomUUID } from 'node:crypto';
import type { Collection } from 'mongodb';
import { AppError } from '@quarry/errors';
import type {
  Credential,
  EmbedTokenRecord,
  NewEmbedToken,
  NewToken,
  NewUser,
  TokenRecord,
  User,
  UserChanges,
  UserStatus,
} from '../domain/identity';
import type { MetadataStore } from '../ports/metadata-store.port';
import { isDuplicateKey, type EmbedTokenDoc, type TokenDoc, type UserDoc } from './mongo-collections';

function toEmbedToken({ _id, expireAt: _ttl, ...rest }: EmbedTokenDoc): EmbedTokenRecord {
  return { id: _id, ...rest };
}

function toUser({ _id, ...rest }: UserDoc): User {
  return { id: _id, ...rest };
}

function toToken({ _id, ...rest }: TokenDoc): TokenRecord {
  return { id: _id, ...rest };
}

/** Users, API tokens and embed tokens (the MetadataStore port) on MongoDB. */
export class MongoIdentityStore implements Omit<MetadataStore, 'ping' | 'close'> {
  constructor(
    private readonly users: Collection<UserDoc>,
    private readonly tokens: Collection<TokenDoc>,
    private readonly embeds: Collection<EmbedTokenDoc>,
  ) {}

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

  async updateUser(name: string, changes: UserChanges): Promise<User> {
    // Only the parts given are set, in one atomic update: the rest stays as stored.
    const set: Partial<Omit<UserDoc, '_id'>> = {
      ...(changes.admin === undefined ? {} : { admin: changes.admin }),
      ...(changes.indexes === undefined ? {} : { indexes: [...changes.indexes] }),
      ...(changes.realms === undefined ? {} : { realms: changes.realms.map((r) => ({ ...r })) }),
    };
    const doc =
      Object.keys(set).length === 0
        ? await this.users.findOne({ name })
        : await this.users.findOneAndUpdate({ name }, { $set: set }, { returnDocument: 'after' });
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
      ...(token.name === undefined ? {} : { name: token.name }),
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

  async setTokenScopes(id: string, scopes: readonly string[]): Promise<TokenRecord> {
    const doc = await this.tokens.findOneAndUpdate(
      { _id: id },
      { $set: { scopes: [...scopes] } },
      { returnDocument: 'after' },
    );
    if (!doc) throw AppError.notFound(`Token "${id}" not found`);
    return toToken(doc);
  }
}
