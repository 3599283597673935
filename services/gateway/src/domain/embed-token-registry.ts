import { LRUCache } from 'lru-cache';
import { AppError } from '@quarry/errors';
import type { EmbedTokenRecord, MetadataStore } from '@quarry/metadata-store';
import type { Logger } from '@quarry/logger';

/** How long another replica's revocation may go unseen here: the lookup cache's lifetime (docs, README). */
export const EMBED_REVOCATION_CACHE_MS = 2000;
const HOUR_MS = 3_600_000;

type EmbedStore = Pick<
  MetadataStore,
  'recordEmbedToken' | 'findEmbedToken' | 'revokeEmbedToken' | 'purgeEmbedTokens' | 'countLiveEmbedTokens'
>;

/**
 * The embed tokens issued (TOKENS.EMBED) and revoked (TOKENS.REVOKE_EMBED), kept in the metadata store
 * until they expire. Every call with an embed token asks whether it is revoked: a revocation made by
 * this gateway counts at once (it is remembered here before the revoke call answers, and checked again
 * just before a call is dispatched), one made by another replica or by `quarry token revoke-embed` once
 * the store has been asked, at most EMBED_REVOCATION_CACHE_MS after. So a busy embed token costs the
 * store one lookup per token per 2 s, concurrent misses sharing it, and each call a cache hit.
 */
export class EmbedTokenRegistry {
  /** Revoked by this gateway: id → expiry (ms). Tiny (a token's life at most) and never stale. */
  private readonly revokedHere = new Map<string, number>();
  private readonly revoked: LRUCache<string, boolean>;
  private purgeTimer: NodeJS.Timeout | undefined;

  /** Live (unexpired, unrevoked) embed tokens one user may hold (QUARRY_EMBED_TOKENS_PER_USER). */
  private readonly livePerUser: number;

  constructor(
    private readonly store: EmbedStore,
    private readonly log: Logger,
    opts: { cacheMs?: number; maxCached?: number; livePerUser?: number } = {},
    private readonly now: () => number = Date.now,
  ) {
    this.livePerUser = opts.livePerUser ?? Infinity;
    this.revoked = new LRUCache<string, boolean>({
      max: opts.maxCached ?? 100_000,
      ttl: opts.cacheMs ?? EMBED_REVOCATION_CACHE_MS,
      fetchMethod: async (id) => (await this.store.findEmbedToken(id))?.revokedAt != null,
    });
  }

  /** Purges expired records at start and hourly (MongoDB's TTL index does it too). */
  start(): void {
    void this.purge();
    this.purgeTimer = setInterval(() => void this.purge(), HOUR_MS);
    this.purgeTimer.unref();
  }

  stop(): void {
    clearInterval(this.purgeTimer);
    this.purgeTimer = undefined;
  }

  async purge(): Promise<void> {
    const now = this.now();
    for (const [id, expires] of this.revokedHere) if (expires <= now) this.revokedHere.delete(id);
    try {
      const removed = await this.store.purgeEmbedTokens(new Date(now).toISOString());
      if (removed > 0) this.log.info({ removed }, 'expired embed token records purged');
    } catch (err) {
      this.log.warn({ err }, 'embed token purge failed');
    }
  }

  /**
   * Refuses (400) a user who holds QUARRY_EMBED_TOKENS_PER_USER live ones already: each embed token is a
   * handle to its issuer's rights, and an unbounded number of them is unbounded state to keep and check.
   * Counted before the insert, so two issued at once at the limit may both pass: a bound, not a quota.
   */
  async checkRoom(userId: string): Promise<void> {
    if (!Number.isFinite(this.livePerUser)) return;
    const live = await this.store.countLiveEmbedTokens(userId, new Date(this.now()).toISOString());
    if (live >= this.livePerUser)
      throw AppError.invalid(
        `ttlSeconds: you hold ${live} live embed tokens, the most one user may (QUARRY_EMBED_TOKENS_PER_USER); revoke one with TOKENS.REVOKE_EMBED or let one expire`,
      );
  }

  record(token: { id: string; userId: string; tokenId: string; expiresAt: string }): Promise<EmbedTokenRecord> {
    return this.store.recordEmbedToken(token);
  }

  /** With `userId`, only that user's (TOKENS.REVOKE_EMBED); NOT_FOUND otherwise, as for an unknown id. */
  async revoke(id: string, userId?: string): Promise<EmbedTokenRecord> {
    const record = await this.store.revokeEmbedToken(id, userId);
    // Not written into the lookup cache: that would abort lookups under way (lru-cache rejects them as
    // "replaced"), failing calls that only needed a 401. revokedHere is asked first and after each lookup.
    this.revokedHere.set(id, Date.parse(record.expiresAt));
    return record;
  }

  /** Whether an embed token is revoked, as of at most EMBED_REVOCATION_CACHE_MS ago for other replicas. */
  async isRevoked(id: string): Promise<boolean> {
    if (this.revokedHere.has(id)) return true;
    const revoked = (await this.revoked.fetch(id)) === true;
    // A lookup that set out before this gateway revoked it must not let it through.
    return revoked || this.revokedHere.has(id);
  }

  /** Synchronous: revoked by this gateway (for the check just before a call is dispatched). */
  revokedByThisGateway(id: string): boolean {
    return this.revokedHere.has(id);
  }
}
