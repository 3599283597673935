import fs from 'node:fs';
import { linesEventually, makeDataDir, spawnServe, stopProc, type Proc } from './support/quarry-process';

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
  // A hang guard: a loaded machine can take seconds to end the orphaned Redis.
  const gone = async (pid: number) => {
    const deadline = Date.now() + 30_000;
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
    // A hang guard: the start alone may take up to a minute on a loaded machine.
    180_000,
  );

  // The fifth field of /proc/<pid>/stat (after the parenthesised command, which may hold spaces).
  const processGroupOf = (pid: number) =>
    Number(
      fs
        .readFileSync(`/proc/${pid}/stat`, 'utf8')
        .replace(/^.*\) /s, '')
        .split(' ')[2],
    );

  /** Ends the process as told and resolves with its exit code, once its last line is read. */
  const stopAs = async (proc: Proc, send: () => void) => {
    const exited = new Promise<number | null>((resolve) => proc.child.once('exit', (code) => resolve(code)));
    send();
    const code = await exited;
    // Its last lines can trail its exit through the pipe: wait (a hang guard of 30 s) for the one that says
    // it stopped, and so for every line before it.
    await linesEventually(
      () => proc.lines,
      (lines) => lines.some((l) => l.includes('"msg":"stopped"')),
      30_000,
    );
    return { code };
  };

  it('Ctrl-C to the whole process group (as a terminal sends it): Redis outlasts the stop, which ends cleanly', async () => {
    // Redis in the group would stop first and leave the queues' closes waiting on it.
    const { proc } = await spawnServe({ QUARRY_DATA_DIR: makeDataDir(), QUARRY_TARGET: 'all' }, { detached: true });
    const pid = pidOf(proc.lines);
    started.push(pid);
    // The terminal's signal reaches the foreground group only: Redis is not in it.
    expect(processGroupOf(pid)).not.toBe(processGroupOf(proc.child.pid!));
    const { code } = await stopAs(proc, () => process.kill(-proc.child.pid!, 'SIGINT'));
    expect({ code, stopped: proc.lines.some((l) => l.includes('"msg":"stopped"')) }).toEqual({
      code: 0,
      stopped: true,
    });
    expect(proc.lines.filter((l) => l.includes('ECONNREFUSED'))).toEqual([]);
    // Within its own bound (drain + grace + margin), or its watchdog would have exited 1 saying so: the
    // product's bound, not one of the test's that a busy machine outlasts (21 s was seen against 20).
    expect(proc.lines.filter((l) => l.includes('the stop did not finish in time'))).toEqual([]);
    expect(await gone(pid)).toBe(true);
  }, 180_000);

  it('a Redis that died first holds no stop: every module stops, the process exits 0', async () => {
    const { proc } = await spawnServe({ QUARRY_DATA_DIR: makeDataDir(), QUARRY_TARGET: 'all' });
    const pid = pidOf(proc.lines);
    started.push(pid);
    process.kill(pid, 'SIGKILL');
    expect(await gone(pid)).toBe(true);
    const { code } = await stopAs(proc, () => proc.child.kill('SIGTERM'));
    // Without bounded closes the stop waited for Redis for ever (the watchdog then exits 1 after 30 s).
    expect({ code, stopped: proc.lines.some((l) => l.includes('"msg":"stopped"')) }).toEqual({
      code: 0,
      stopped: true,
    });
    // Within its own bound (drain + grace + margin), or its watchdog would have exited 1 saying so: the
    // product's bound, not one of the test's that a busy machine outlasts (21 s was seen against 20).
    expect(proc.lines.filter((l) => l.includes('the stop did not finish in time'))).toEqual([]);
    const stoppedModules = proc.lines
      .filter((l) => l.includes('"module stopped"'))
      .map((l) => (JSON.parse(l) as { module: string }).module);
    expect(stoppedModules).toEqual(expect.arrayContaining(['scheduler', 'chart-worker', 'services', 'private-redis']));
  }, 180_000);
});
