import { FlexibleRateLimiter } from './flexible-rate-limiter.adapter';

describe('FlexibleRateLimiter (in memory)', () => {
  it('lists its policies and says, take by take, what is left of the one nearest to running out', async () => {
    // 0.5/s: 1 a window of 2 s; a burst of 2 more, refilled over 4 s.
    const limiter = new FlexibleRateLimiter(0.5, 2, undefined, 'token');
    expect(limiter.policies).toEqual([
      { name: 'token', quota: 1, windowSeconds: 2 },
      { name: 'token-burst', quota: 2, windowSeconds: 4 },
    ]);
    const takes = [];
    for (let i = 0; i < 4; i++) takes.push(await limiter.take('k'));
    expect(takes.map((t) => [t.ok, t.state.policy, t.state.remaining])).toEqual([
      [true, 'token', 0],
      [true, 'token-burst', 1],
      [true, 'token-burst', 0],
      [false, 'token-burst', 0],
    ]);
    const refused = takes[3]!;
    // A refusal's reset is its Retry-After.
    expect(refused.ok || refused.state.resetSeconds === refused.retryAfterSeconds).toBe(true);
    expect(refused.state.resetSeconds).toBeGreaterThanOrEqual(1);
    expect(refused.state.resetSeconds).toBeLessThanOrEqual(2);
    // Another key has its own allowance.
    expect((await limiter.take('other')).state).toEqual({ policy: 'token', remaining: 0, resetSeconds: 2 });
  });

  it('without a burst has one policy, and refuses on it', async () => {
    const limiter = new FlexibleRateLimiter(20, 0, undefined, 'address');
    expect(limiter.policies).toEqual([{ name: 'address', quota: 20, windowSeconds: 1 }]);
    let last;
    for (let i = 0; i < 21; i++) last = await limiter.take('a');
    expect(last).toMatchObject({ ok: false, firstRefusal: true, state: { policy: 'address', remaining: 0 } });
    expect((await limiter.take('a')).ok === false && (await limiter.take('a'))).toMatchObject({ firstRefusal: false });
  });
});
