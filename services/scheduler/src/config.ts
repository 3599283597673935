import type { Config } from '@quarry/config';

export interface SchedulerConfig {
  redisUrl: string;
  dataDir: string;
  minIntervalSeconds: number;
  perUser: number;
  webhookAllow: string[];
  webhookKey: string | undefined;
  smtpUrl: string | undefined;
  smtpFrom: string;
  /** The first retry's delay; each next one doubles it. */
  backoffMs: number;
  /** Deliveries at once in this process: background work never takes more than this of the heavy slots. */
  concurrency: number;
}

export function schedulerConfig(config: Config, redisUrl: string): SchedulerConfig {
  return {
    redisUrl,
    dataDir: config.dataDir,
    minIntervalSeconds: config.schedules.minIntervalSeconds,
    perUser: config.schedules.perUser,
    webhookAllow: config.schedules.webhookAllow,
    webhookKey: config.schedules.webhookKey,
    smtpUrl: config.schedules.smtpUrl,
    smtpFrom: config.schedules.smtpFrom,
    backoffMs: config.schedules.backoffMs,
    concurrency: 1,
  };
}
