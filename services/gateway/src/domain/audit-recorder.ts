import { createHash } from 'node:crypto';
import type { Logger } from '@quarry/logger';
import type { AuditEntry, AuditLog } from '@quarry/metadata-store';

/** Entries held before a write is forced; and at most this many waiting when the store is slow or down. */
const BATCH = 1000;
const MAX_PENDING = 50_000;
const DAY_MS = 86_400_000;

/** Keys whose value is a credential: digested as "***", so the trail is no oracle to guess them against. */
const SECRET_KEYS = new Set(['password', 'secret', 'clientSecret', 'token']);

/**
 * A URL's credentials taken out as SOURCES.FIND shows them (user, password and query as ***); a string
 * that is no URL with parts stays as it is.
 */
function withoutCredentials(text: string): string {
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) return text;
  try {
    const u = new URL(text);
    if (u.username === '' && u.password === '' && u.search === '') return text;
    if (u.username !== '') u.username = '***';
    if (u.password !== '') u.password = '***';
    if (u.search !== '') u.search = '***';
    return u.toString();
  } catch {
    // Not parsable as a URL (a port past 65535, a space in the host), yet it may carry user:password@.
    return text.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/?#]*@/i, '$1***@').replace(/\?.*$/s, '?***');
  }
}

/**
 * SHA-256 of the params as they arrived: tells identical calls apart from different ones, keeps nothing.
 * A SHA-256 of a password is as good as the password to whoever can try guesses against it, so secrets
 * (SECRET_KEYS, a URL's credentials) go in as "***": two calls that differ only there digest alike.
 * Walked with an explicit stack, not JSON.stringify: params nested 200,000 deep parse (V8's JSON.parse
 * is iterative) but would overflow a recursive serialiser, and the call must still be refused with a 400.
 */
export function paramsDigest(params: unknown): string {
  const hash = createHash('sha256');
  // Punctuation and keys go on the stack as Token objects, so no params value can pass for one.
  const stack: unknown[] = [params ?? null];
  while (stack.length > 0) {
    const value = stack.pop();
    if (value instanceof Token) hash.update(value.text);
    else if (Array.isArray(value)) {
      stack.push(Token.of(']'));
      for (let i = value.length - 1; i >= 0; i--) stack.push(value[i], Token.of(i > 0 ? ',' : ''));
      stack.push(Token.of('['));
    } else if (value !== null && typeof value === 'object') {
      const entries = Object.entries(value);
      stack.push(Token.of('}'));
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, item] = entries[i]!;
        const kept = SECRET_KEYS.has(key) && item !== null && item !== undefined ? '***' : item;
        stack.push(
          typeof kept === 'string' ? withoutCredentials(kept) : kept,
          Token.of(`${i > 0 ? ',' : ''}${JSON.stringify(key)}:`),
        );
      }
      stack.push(Token.of('{'));
    } else hash.update(JSON.stringify(value) ?? 'null');
  }
  return hash.digest('hex');
}

class Token {
  private constructor(readonly text: string) {}
  static of(text: string): Token {
    return new Token(text);
  }
}

/**
 * The audit trail's writer: calls are queued in memory and written in batches (one transaction each)
 * every `flushMs` or every BATCH entries, so recording costs a call an array push, not a disk sync.
 * Entries older than `keepDays` are purged at start and once a day. A store that fails a write keeps
 * the batch for the next try, up to MAX_PENDING entries (then the oldest are dropped, and said so).
 */
export class AuditRecorder {
  private pending: AuditEntry[] = [];
  private flushing: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private purgeTimer: NodeJS.Timeout | undefined;
  private dropped = 0;

  constructor(
    private readonly log: AuditLog,
    private readonly logger: Logger,
    private readonly keepDays: number,
    private readonly flushMs = 500,
    private readonly now: () => number = Date.now,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.flush(), this.flushMs);
    this.timer.unref();
    void this.purge();
    this.purgeTimer = setInterval(() => void this.purge(), DAY_MS);
    this.purgeTimer.unref();
  }

  record(entry: AuditEntry): void {
    this.pending.push(entry);
    if (this.pending.length > MAX_PENDING) {
      this.dropped += this.pending.length - MAX_PENDING;
      this.pending.splice(0, this.pending.length - MAX_PENDING);
    }
    if (this.pending.length >= BATCH) void this.flush();
  }

  /** Writes what is queued; concurrent callers share one write. */
  flush(): Promise<void> {
    if (this.flushing) return this.flushing;
    if (this.pending.length === 0) return Promise.resolve();
    const batch = this.pending;
    this.pending = [];
    this.flushing = this.log
      .appendAudit(batch)
      .then(() => {
        if (this.dropped > 0) {
          this.logger.error({ dropped: this.dropped }, 'audit entries dropped while the store was failing');
          this.dropped = 0;
        }
      })
      .catch((err: unknown) => {
        this.logger.warn({ err, entries: batch.length }, 'audit write failed; retrying with the next batch');
        this.pending = batch.concat(this.pending);
      })
      .finally(() => {
        this.flushing = undefined;
      });
    return this.flushing;
  }

  async purge(): Promise<void> {
    try {
      const removed = await this.log.purgeAudit(new Date(this.now() - this.keepDays * DAY_MS).toISOString());
      if (removed > 0) this.logger.info({ removed, keepDays: this.keepDays }, 'audit entries purged');
    } catch (err) {
      this.logger.warn({ err }, 'audit purge failed');
    }
  }

  /** Stops the timers and writes everything still queued. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    clearInterval(this.purgeTimer);
    await this.flush();
    if (this.pending.length > 0) await this.flush();
  }
}
