import type IORedis from 'ioredis';
import { SOURCE_RUNS_KEPT } from '@quarry/contract';
import type { CursorMark, InsertVerdict, SourceRecord, SourceRunRecord, SourceStore } from '../ports/source-store.port';

const PREFIX = 'quarry:sources';
const sourceKey = (id: string) => `${PREFIX}:s:${id}`;
const ownerKey = (ownerId: string) => `${PREFIX}:owner:${ownerId}`;
const namesKey = (ownerId: string) => `${PREFIX}:names:${ownerId}`;
const runsKey = (id: string) => `${PREFIX}:runs:${id}`;
const runKey = (id: string, runId: string) => `${PREFIX}:r:${id}:${runId}`;
const cursorKey = (id: string) => `${PREFIX}:cursor:${id}`;
const claimKey = (id: string) => `${PREFIX}:claim:${id}`;
const ALL = `${PREFIX}:all`;

// The count, the name and the insert in one script: two requests racing cannot both get in.
const INSERT = `
if redis.call('SCARD', KEYS[2]) >= tonumber(ARGV[3]) then return 'limit' end
if redis.call('HSETNX', KEYS[3], ARGV[4], ARGV[1]) == 0 then return 'name-taken' end
redis.call('SET', KEYS[1], ARGV[2])
redis.call('SADD', KEYS[2], ARGV[1])
redis.call('SADD', KEYS[4], ARGV[1])
return 'ok'`;

// Renaming takes the new name before it lets go of the old one; a removed source stays removed.
const UPDATE = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 'gone' end
if ARGV[3] ~= ARGV[4] then
  if redis.call('HSETNX', KEYS[2], ARGV[3], ARGV[1]) == 0 then return 'name-taken' end
  if redis.call('HGET', KEYS[2], ARGV[4]) == ARGV[1] then redis.call('HDEL', KEYS[2], ARGV[4]) end
end
redis.call('SET', KEYS[1], ARGV[2])
return 'ok'`;

// A run is written only while its source exists, and the newest SOURCE_RUNS_KEPT are kept.
const PUT_RUN = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local isNew = redis.call('EXISTS', KEYS[3]) == 0
redis.call('SET', KEYS[3], ARGV[2])
if isNew then
  redis.call('LPUSH', KEYS[2], ARGV[1])
  local dropped = redis.call('LRANGE', KEYS[2], tonumber(ARGV[3]), -1)
  for _, runId in ipairs(dropped) do redis.call('DEL', ARGV[4] .. runId) end
  redis.call('LTRIM', KEYS[2], 0, tonumber(ARGV[3]) - 1)
end
return 1`;

const RENEW = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]))
return 1`;

const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 1`;

/**
 * Sources beside their BullMQ jobs, in the same Redis: one store to keep durable, as the schedules are
 * (the private redis-server appends every write to a file in the data directory).
 */
export class RedisSourceStore implements SourceStore {
  constructor(private readonly redis: IORedis) {}

  async insert(s: SourceRecord, limit: number): Promise<InsertVerdict> {
    const verdict = await this.redis.eval(
      INSERT,
      4,
      sourceKey(s.id),
      ownerKey(s.ownerId),
      namesKey(s.ownerId),
      ALL,
      s.id,
      JSON.stringify(s),
      limit,
      s.name,
    );
    return verdict as InsertVerdict;
  }

  async get(id: string): Promise<SourceRecord | null> {
    const text = await this.redis.get(sourceKey(id));
    return text === null ? null : (JSON.parse(text) as SourceRecord);
  }

  async list(ownerId?: string): Promise<SourceRecord[]> {
    const ids = await this.redis.smembers(ownerId === undefined ? ALL : ownerKey(ownerId));
    if (ids.length === 0) return [];
    const texts = await this.redis.mget(ids.map(sourceKey));
    return texts
      .filter((t): t is string => t !== null)
      .map((t) => JSON.parse(t) as SourceRecord)
      .filter((s) => ownerId === undefined || s.ownerId === ownerId);
  }

  async update(s: SourceRecord, previousName: string): Promise<'ok' | 'name-taken' | 'gone'> {
    const verdict = await this.redis.eval(
      UPDATE,
      2,
      sourceKey(s.id),
      namesKey(s.ownerId),
      s.id,
      JSON.stringify(s),
      s.name,
      previousName,
    );
    return verdict as 'ok' | 'name-taken' | 'gone';
  }

  async remove(id: string): Promise<boolean> {
    const s = await this.get(id);
    if (!s) return false;
    const runIds = await this.redis.lrange(runsKey(id), 0, -1);
    const tx = this.redis
      .multi()
      .del(sourceKey(id), runsKey(id), cursorKey(id), claimKey(id), ...runIds.map((r) => runKey(id, r)))
      .srem(ownerKey(s.ownerId), id)
      .srem(ALL, id);
    // Only if the name is still this source's (a rename may have given it to another).
    const holder = await this.redis.hget(namesKey(s.ownerId), s.name);
    if (holder === id) tx.hdel(namesKey(s.ownerId), s.name);
    const results = await tx.exec();
    return ((results?.[0]?.[1] as number | undefined) ?? 0) > 0;
  }

  async claim(sourceId: string, runId: string, ttlMs: number): Promise<boolean> {
    return (await this.redis.set(claimKey(sourceId), runId, 'PX', ttlMs, 'NX')) === 'OK';
  }

  claimant(sourceId: string): Promise<string | null> {
    return this.redis.get(claimKey(sourceId));
  }

  async renew(sourceId: string, runId: string, ttlMs: number): Promise<boolean> {
    return (await this.redis.eval(RENEW, 1, claimKey(sourceId), runId, ttlMs)) === 1;
  }

  async release(sourceId: string, runId: string): Promise<void> {
    await this.redis.eval(RELEASE, 1, claimKey(sourceId), runId);
  }

  async putRun(run: SourceRunRecord): Promise<void> {
    await this.redis.eval(
      PUT_RUN,
      3,
      sourceKey(run.sourceId),
      runsKey(run.sourceId),
      runKey(run.sourceId, run.runId),
      run.runId,
      JSON.stringify(run),
      SOURCE_RUNS_KEPT,
      runKey(run.sourceId, ''),
    );
  }

  async getRun(sourceId: string, runId: string): Promise<SourceRunRecord | null> {
    const text = await this.redis.get(runKey(sourceId, runId));
    return text === null ? null : (JSON.parse(text) as SourceRunRecord);
  }

  async runs(sourceId: string, limit: number): Promise<SourceRunRecord[]> {
    const ids = await this.redis.lrange(runsKey(sourceId), 0, limit - 1);
    if (ids.length === 0) return [];
    const texts = await this.redis.mget(ids.map((r) => runKey(sourceId, r)));
    return texts.filter((t): t is string => t !== null).map((t) => JSON.parse(t) as SourceRunRecord);
  }

  async cursor(sourceId: string): Promise<CursorMark | null> {
    const text = await this.redis.get(cursorKey(sourceId));
    return text === null ? null : (JSON.parse(text) as CursorMark);
  }

  async setCursor(sourceId: string, mark: CursorMark): Promise<void> {
    await this.redis.set(cursorKey(sourceId), JSON.stringify(mark));
  }

  async forgetCursor(sourceId: string): Promise<void> {
    await this.redis.del(cursorKey(sourceId));
  }
}
