/**
 * The timer side of schedules: a recurring job per schedule (BullMQ job schedulers on the deployment's
 * Redis). Jobs of one run carry the same runAt through every retry and a worker restart.
 */
export interface DeliveryQueue {
  /** Creates or replaces the schedule's timer; cron and timeZone were validated already. */
  upsert(scheduleId: string, cron: string, timeZone: string): Promise<void>;
  /** One run at once, beside the timer (runNow). */
  runNow(scheduleId: string): Promise<void>;
  remove(scheduleId: string): Promise<void>;
  /** When the timer fires next; null when it has none. */
  nextRun(scheduleId: string): Promise<string | null>;
}

/** One run of a schedule, as the worker hands it to the delivery use case. */
export interface DeliveryJob {
  scheduleId: string;
  /** The run's scheduled time (ms): the same for every try of it. */
  runAt: number;
  /** 1 for the first try. */
  attempt: number;
  maxAttempts: number;
}
