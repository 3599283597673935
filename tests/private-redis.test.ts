import { makeDataDir, spawnServe, stopProc } from './support/quarry-process';

/** The all-in-one process's private redis-server never outlives it, however the process ends. */
describe('the private redis-server of an all-in-one process', () => {
  const alive = (pid: number) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  const pidOf = (lines: string[]) => {
    const line = lines.find((l) => l.includes('"private redis-server started for the chart queue"'));
    if (!line) throw new Error(`no private redis-server line in:\n${lines.join('\n')}`);
    return (JSON.parse(line) as { pid: number }).pid;
  };
  const gone = async (pid: number) => {
    const deadline = Date.now() + 5000;
    while (alive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    return !alive(pid);
  };

  const started: number[] = [];
  // Should the guarantee break, the orphan is not left behind by this test.
  afterAll(() => {
    for (const pid of started) if (alive(pid)) process.kill(pid, 'SIGKILL');
  });

  it.each(['SIGTERM', 'SIGKILL'] as const)(
    'is gone after the process ends by %s',
    async (signal) => {
      const { proc } = await spawnServe({ QUARRY_DATA_DIR: makeDataDir(), QUARRY_TARGET: 'all' });
      const pid = pidOf(proc.lines);
      started.push(pid);
      expect(alive(pid)).toBe(true);
      await stopProc(proc, signal);
      expect(await gone(pid)).toBe(true);
    },
    60000,
  );
});
