import type { Config } from '@quarry/config';

export function schedulerConfig(config: Config, redisUrl: string) {
  const { minIntervalSeconds, perUser, webhookAllow, webhookKey, smtpUrl, smtpFrom, backoffMs } = config.schedules;
  return {
    redisUrl,
    dataDir: config.dataDir,
    minIntervalSeconds,
    perUser,
    /** Per owner and UTC day (QUARRY_DELIVERIES_PER_DAY, QUARRY_RECIPIENTS_PER_DAY). */
    daily: { deliveries: config.schedules.deliveriesPerDay, recipients: config.schedules.recipientsPerDay },
    webhookAllow,
    webhookKey,
    smtpUrl,
    smtpFrom,
    /** The first retry's delay; each next one doubles it. */
    backoffMs,
    /**
     * Deliveries at once in this process, one per owner at a time: a slow receiver holds one, never all;
     * background work never takes more than this of the heavy slots.
     */
    concurrency: 3,
  };
}

export type SchedulerConfig = ReturnType<typeof schedulerConfig>;
