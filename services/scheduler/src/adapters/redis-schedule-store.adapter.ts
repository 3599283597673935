import type IORedis from 'ioredis';
import { SCHEDULE_DELIVERIES_KEPT } from '@quarry/contract';
import type {
  DailyCaps,
  DailyVerdict,
  DeliveryRecord,
  ScheduleRecord,
  ScheduleStore,
} from '../ports/schedule-store.port';

const PREFIX = 'quarry:schedules';
const scheduleKey = (id: string) => `${PREFIX}:s:${id}`;
const ownerKey = (ownerId: string) => `${PREFIX}:owner:${ownerId}`;
const deliveriesKey = (id: string) => `${PREFIX}:d:${id}`;
const runNowKey = (ownerId: string, guid: string) => `${PREFIX}:now:${ownerId}:${guid}`;
const dailyKey = (ownerId: string, day: string) => `${PREFIX}:day:${ownerId}:${day}`;

// Both daily counts are checked and taken together: a delivery either fits both caps or takes nothing.
const TAKE_DAILY = `
local d = tonumber(redis.call('HGET', KEYS[1], 'deliveries') or '0')
local r = tonumber(redis.call('HGET', KEYS[1], 'recipients') or '0')
if d + 1 > tonumber(ARGV[1]) then return 'deliveries' end
if r + tonumber(ARGV[3]) > tonumber(ARGV[2]) then return 'recipients' end
redis.call('HINCRBY', KEYS[1], 'deliveries', 1)
redis.call('HINCRBY', KEYS[1], 'recipients', tonumber(ARGV[3]))
redis.call('EXPIRE', KEYS[1], 172800)
return 'ok'`;

// The count and the insert in one script: two requests racing at the limit cannot both get in.
const INSERT = `
if redis.call('SCARD', KEYS[2]) >= tonumber(ARGV[3]) then return 0 end
redis.call('SET', KEYS[1], ARGV[2])
redis.call('SADD', KEYS[2], ARGV[1])
return 1`;

/**
 * Schedules beside their BullMQ timers, in the same Redis: one store to keep durable (the private
 * redis-server appends every write to a file in the data directory).
 */
export class RedisScheduleStore implements ScheduleStore {
  constructor(private readonly redis: IORedis) {}

  async insert(s: ScheduleRecord, limit: number): Promise<boolean> {
    const done = await this.redis.eval(
      INSERT,
      2,
      scheduleKey(s.id),
      ownerKey(s.ownerId),
      s.id,
      JSON.stringify(s),
      limit,
    );
    return done === 1;
  }

  async get(id: string): Promise<ScheduleRecord | null> {
    const text = await this.redis.get(scheduleKey(id));
    return text === null ? null : (JSON.parse(text) as ScheduleRecord);
  }

  async listByOwner(ownerId: string): Promise<ScheduleRecord[]> {
    const ids = await this.redis.smembers(ownerKey(ownerId));
    if (ids.length === 0) return [];
    const texts = await this.redis.mget(ids.map(scheduleKey));
    return texts
      .filter((t): t is string => t !== null)
      .map((t) => JSON.parse(t) as ScheduleRecord)
      .filter((s) => s.ownerId === ownerId);
  }

  async stop(id: string, reason: string): Promise<void> {
    const s = await this.get(id);
    if (!s) return;
    await this.redis.set(scheduleKey(id), JSON.stringify({ ...s, status: 'stopped', stoppedReason: reason }), 'XX');
  }

  async rememberAlert(id: string, digest: string): Promise<void> {
    const s = await this.get(id);
    if (!s) return;
    await this.redis.set(scheduleKey(id), JSON.stringify({ ...s, lastAlert: digest }), 'XX');
  }

  async remove(id: string): Promise<boolean> {
    const s = await this.get(id);
    if (!s) return false;
    await this.redis.multi().del(scheduleKey(id), deliveriesKey(id)).srem(ownerKey(s.ownerId), id).exec();
    return true;
  }

  async recordDelivery(id: string, d: DeliveryRecord): Promise<void> {
    await this.redis
      .multi()
      .lpush(deliveriesKey(id), JSON.stringify(d))
      .ltrim(deliveriesKey(id), 0, SCHEDULE_DELIVERIES_KEPT - 1)
      .exec();
  }

  async claimRunNow(ownerId: string, guid: string, seconds: number): Promise<number | null> {
    const key = runNowKey(ownerId, guid);
    if ((await this.redis.set(key, '1', 'EX', seconds, 'NX')) === 'OK') return null;
    return Math.max(1, await this.redis.ttl(key));
  }

  async takeDaily(ownerId: string, day: string, recipients: number, caps: DailyCaps): Promise<DailyVerdict> {
    const verdict = await this.redis.eval(
      TAKE_DAILY,
      1,
      dailyKey(ownerId, day),
      caps.deliveries,
      caps.recipients,
      recipients,
    );
    return verdict === 'deliveries' || verdict === 'recipients' ? verdict : 'ok';
  }

  async deliveries(id: string): Promise<DeliveryRecord[]> {
    return (await this.redis.lrange(deliveriesKey(id), 0, SCHEDULE_DELIVERIES_KEPT - 1)).map(
      (t) => JSON.parse(t) as DeliveryRecord,
    );
  }
}
