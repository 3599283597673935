import type { ExportFormat, ExportMethod } from '@quarry/contract';
import type { Caller } from './service-clients.port';

/** What an export's job carries: everything its run needs, on whichever gateway takes it up. */
export interface ExportJob {
  exportId: string;
  /** The caller as it was when the export started: its permissions and realms apply to the run. */
  caller: Caller;
  method: ExportMethod;
  params: Record<string, unknown>;
  format: ExportFormat;
  requestId: string;
  /**
   * What START found for a search (its count, and the index's fields where the format needs them), and when:
   * a run that starts soon after does not ask the query service again; a later one (a retry, a run taken up
   * after a restart, one that waited its owner's turn) checks again, since the index may have changed.
   */
  checked?: SearchCheck;
}

/** A search's count and the index's fields (names) as its caller saw them, at `at` (ms since the epoch). */
export interface SearchCheck {
  at: number;
  count: number;
  fields: string[];
}

/** How a run ended: `wait` sets the job aside for the owner's turn, `retry` hands it back for another run. */
export type ExportRunOutcome = 'done' | 'wait';

export interface ExportRun {
  /** Names this run's partial file: a run taken up again after a crash never writes over an earlier one. */
  run: string;
  /** Aborted when the process stops: the run hands the job back instead of failing it. */
  signal: AbortSignal;
}

/** What the queue says of an export's job, for a record that still says queued or running. */
export type ExportJobStatus = { state: 'queued' | 'running' | 'done' } | { state: 'failed' | 'missing'; error: string };

/**
 * The deployment's queue of export jobs (BullMQ on Redis): any gateway adds, any gateway's worker runs.
 * A worker that dies mid-run loses the job's lock and the job runs again from the start; one that dies
 * again fails it.
 */
export interface ExportJobs {
  /**
   * Queues the job. `turn` is its place among its owner's exports still to run (1 for a user's only one):
   * a lower turn runs first, whoever added it earlier, so every user's first export runs before anyone's
   * second; within a turn, first in first out.
   */
  add(job: ExportJob, turn: number): Promise<void>;
  status(exportId: string): Promise<ExportJobStatus>;
  /** Starts this process's worker: `concurrency` runs at once. */
  work(run: (job: ExportJob, run: ExportRun) => Promise<ExportRunOutcome>, concurrency: number): void;
  /** Aborts the runs under way (they go back to the queue) and stops taking jobs. */
  close(): Promise<void>;
}

/** Thrown by a run when the failure is the export's own (bad query, full disk): no other run would do better. */
export class ExportFailed extends Error {}
