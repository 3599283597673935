import { MongoServerError, type Collection, type Db } from 'mongodb';
import type { EmbedTokenRecord, TokenRecord, User } from '../domain/identity';
import type { AuditEntry } from '../ports/audit-log.port';
import type { IndexEntry } from '../ports/index-catalog.port';

/** `seq` orders entries of the same millisecond as they were appended. */
export type AuditDoc = AuditEntry & { seq: number };

export type UserDoc = Omit<User, 'id'> & { _id: string };
export type TokenDoc = Omit<TokenRecord, 'id'> & { _id: string };
/** `expireAt` (the same instant as `expiresAt`) lets MongoDB's TTL monitor purge it on its own as well. */
export type EmbedTokenDoc = Omit<EmbedTokenRecord, 'id'> & { _id: string; expireAt: Date };
/** `droppedAt` marks a tombstone: the document keeps its version so the name's versions never repeat. */
export type IndexDoc = IndexEntry & { _id: string; droppedAt?: string | null };
/** One published version, `_id` "name@version", kept until released (saved reports run on it). */
export type IndexVersionDoc = IndexEntry & { _id: string };
export interface LockDoc {
  _id: string;
  holder: string;
  host: string;
  pid: number;
  acquiredAt: string;
  expiresAt: Date;
}

/** The metadata store's collections, every one of them named here with the indexes it relies on. */
export interface MetadataCollections {
  users: Collection<UserDoc>;
  tokens: Collection<TokenDoc>;
  embeds: Collection<EmbedTokenDoc>;
  indexes: Collection<IndexDoc>;
  versions: Collection<IndexVersionDoc>;
  locks: Collection<LockDoc>;
  audit: Collection<AuditDoc>;
}

/** The collections of `db`, their indexes created where missing: unique ones enforce what the ports promise across processes. */
export async function openCollections(db: Db): Promise<MetadataCollections> {
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
  return {
    users,
    tokens,
    embeds,
    indexes: db.collection<IndexDoc>('indexes'),
    versions,
    locks: db.collection<LockDoc>('index_locks'),
    audit,
  };
}

export function isDuplicateKey(err: unknown): boolean {
  return err instanceof MongoServerError && err.code === 11000;
}
