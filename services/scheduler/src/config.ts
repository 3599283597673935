import type { Config } from '@quarry/config';

export interface SchedulerConfig {
  redisUrl: string;
  dataDir: string;
  minIntervalSeconds: number;
  perUser: number;
  /** Per owner and UTC day (QUARRY_DELIVERIES_PER_DAY, QUARRY_RECIPIENTS_PER_DAY). */
  daily: { deliveries: number; recipients: number };
  webhookAllow: string[];
  webhookKey: string | undefined;
  smtpUrl: string | undefined;
  smtpFrom: string;
  /** The first retry's delay; each next one doubles it. */
  backoffMs: number;
  /**
   * Deliveries at once in this process, one per owner at a time: a slow receiver holds one, never all;
   * background work never takes more than this of the heavy slots.
   */
  concurrency: number;
}

export function schedulerConfig(config: Config, redisUrl: string): SchedulerConfig {
  return {
    redisUrl,
    dataDir: config.dataDir,
    minIntervalSeconds: config.schedules.minIntervalSeconds,
    perUser: config.schedules.perUser,
    daily: { deliveries: config.schedules.deliveriesPerDay, recipients: config.schedules.recipientsPerDay },
    webhookAllow: config.schedules.webhookAllow,
    webhookKey: config.schedules.webhookKey,
    smtpUrl: config.schedules.smtpUrl,
    smtpFrom: config.schedules.smtpFrom,
    backoffMs: config.schedules.backoffMs,
    concurrency: 3,
  };
}
