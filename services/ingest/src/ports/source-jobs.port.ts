/** What a run job carries: a manual run names its run; a cron's job names only its source. */
export interface SourceJob {
  sourceId: string;
  runId?: string;
}

/** What the worker says about a job it took: done (whatever the run's outcome), or to be taken again later. */
export type SourceJobOutcome = 'done' | 'later';

/**
 * Source runs as jobs on the deployment's Redis. Adapters guarantee: a job added is taken by exactly one
 * worker of any ingest replica (again after that worker dies mid-run, once its lock lapses); a cron's
 * jobs follow its time zone; `later` puts the job back for a moment without counting a try.
 */
export interface SourceJobs {
  /** Queues a run once per runId, however often it is called; `delayMs` later than now when given. */
  enqueue(job: Required<SourceJob>, delayMs?: number): Promise<void>;
  /** Whether the run's job is in the queue: waiting, delayed or being run. */
  pending(runId: string): Promise<boolean>;
  schedule(sourceId: string, cron: string, timeZone: string): Promise<void>;
  unschedule(sourceId: string): Promise<void>;
  /** The next time the cron runs the source, or null when it has none. */
  nextRun(sourceId: string): Promise<string | null>;
  /** Starts taking jobs, `concurrency` at a time in this process. */
  work(run: (job: SourceJob) => Promise<SourceJobOutcome>, concurrency: number): void;
  close(): Promise<void>;
}
