import type { SnapshotEngine } from '@quarry/snapshots';
import { ExportEngineLease } from './export-engine-lease';

/** An engine that records what happens to it; its close ends when the test says. */
function fakeEngine() {
  const events: string[] = [];
  let open = false;
  let endClose: () => void = () => undefined;
  const engine = {
    close: () => {
      events.push('close');
      return new Promise<void>((resolve) => {
        endClose = () => {
          open = false;
          events.push('closed');
          resolve();
        };
      });
    },
  };
  const work =
    (name: string, until: Promise<void> = Promise.resolve()) =>
    async (e: SnapshotEngine) => {
      expect(e).toBe(engine);
      open = true;
      events.push(`${name} runs`);
      await until;
      expect(open).toBe(true);
      events.push(`${name} ends`);
      return name;
    };
  return { engine: engine as unknown as SnapshotEngine, events, work, endClose: () => endClose() };
}

function deferred() {
  let resolve: () => void = () => undefined;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/** Past the lease's linger (none here) and the turns it takes. */
const settle = () => new Promise((r) => setTimeout(r, 5));

describe('ExportEngineLease', () => {
  it('closes the engine once the last of overlapping exports has ended, after its answer', async () => {
    const { engine, events, work, endClose } = fakeEngine();
    const lease = new ExportEngineLease(engine, 0);
    const a = deferred();
    const b = deferred();
    const first = lease.use(work('a', a.promise));
    const second = lease.use(work('b', b.promise));
    await settle();
    a.resolve();
    expect(await first).toBe('a');
    await settle();
    expect(events).toEqual(['a runs', 'b runs', 'a ends']);
    b.resolve();
    expect(await second).toBe('b');
    // The answer first: the close comes after the linger.
    expect(events).toEqual(['a runs', 'b runs', 'a ends', 'b ends']);
    await settle();
    expect(events).toEqual(['a runs', 'b runs', 'a ends', 'b ends', 'close']);
    endClose();
    await lease.idle();
    expect(events.at(-1)).toBe('closed');
  });

  it('an export that starts while the engine closes waits for the close, then opens it again', async () => {
    const { engine, events, work, endClose } = fakeEngine();
    const lease = new ExportEngineLease(engine, 0);
    await lease.use(work('a'));
    await settle();
    expect(events).toEqual(['a runs', 'a ends', 'close']);
    const next = lease.use(work('b'));
    await settle();
    // Not on an engine being closed.
    expect(events).toEqual(['a runs', 'a ends', 'close']);
    endClose();
    expect(await next).toBe('b');
    expect(events).toEqual(['a runs', 'a ends', 'close', 'closed', 'b runs', 'b ends']);
    await settle();
    expect(events.at(-1)).toBe('close');
  });

  it('an export that starts while the engine lingers uses it at once and keeps it open', async () => {
    const { engine, events, work } = fakeEngine();
    const lease = new ExportEngineLease(engine, 60_000);
    await lease.use(work('a'));
    const t = Date.now();
    expect(await lease.use(work('b'))).toBe('b');
    // Well short of the 60 s linger it must not wait for: a bound, not a target a loaded machine could miss.
    expect(Date.now() - t).toBeLessThan(30_000);
    await settle();
    expect(events).toEqual(['a runs', 'a ends', 'b runs', 'b ends']);
    // A stopping process does not wait for the linger either; its own close follows.
    await lease.idle();
    expect(events).not.toContain('close');
  });

  it('closes the engine once it has lingered unused', async () => {
    const { engine, events, work } = fakeEngine();
    const lease = new ExportEngineLease(engine, 500);
    await lease.use(work('a'));
    await settle();
    expect(events).toEqual(['a runs', 'a ends']);
    await new Promise((r) => setTimeout(r, 700));
    expect(events).toEqual(['a runs', 'a ends', 'close']);
  });

  it('an export that starts in the same turn as the last one ends keeps the engine open', async () => {
    const { engine, events, work } = fakeEngine();
    const lease = new ExportEngineLease(engine, 0);
    const a = deferred();
    const first = lease.use(work('a', a.promise));
    await settle();
    a.resolve();
    // Started before the first one's end is seen: the engine must not be closed under it.
    const second = lease.use(work('b'));
    await Promise.all([first, second]);
    await settle();
    expect(events).toEqual(['a runs', 'a ends', 'b runs', 'b ends', 'close']);
  });

  it('a failed export closes the engine too, and its error is the caller’s', async () => {
    const { engine, events } = fakeEngine();
    const lease = new ExportEngineLease(engine, 0);
    await expect(
      lease.use(async () => {
        throw new Error('disk full');
      }),
    ).rejects.toThrow('disk full');
    await settle();
    expect(events).toEqual(['close']);
  });
});
