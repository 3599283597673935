/** What every Quarry module offers the process that hosts it (mimir-style targets). */
export interface QuarryModule {
  readonly name: string;
  start(): Promise<void>;
  /** Finishes in-flight work within the grace period, then releases everything the module holds. */
  stop(): Promise<void>;
  /** Rejects while a store the module needs cannot be reached. */
  ready?(): Promise<void>;
}
