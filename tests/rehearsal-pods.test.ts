import { freePort } from './support/quarry-process';
import { RehearsedPod, TIME_SCALE, type PodPlan } from './support/rehearsal';

/*
 * The rehearsal's kubelet: a startup probe polled TIME_SCALE times faster than written keeps the written
 * budget in real seconds (a slow start the manifest allows is no failure), and a pod whose startup probe
 * spends that budget fails its wait at once, saying so, instead of a later "not ready".
 */
async function podListeningAfter(delayMs: number | null, budget: { periodSeconds: number; failureThreshold: number }) {
  const port = await freePort();
  const listen =
    delayMs === null
      ? 'setInterval(() => {}, 1000)'
      : `setTimeout(() => require('http').createServer((q, s) => s.end('ok')).listen(${port}, '127.0.0.1'), ${delayMs})`;
  const plan: PodPlan = {
    name: 'slow-start',
    argv: [process.execPath, '-e', listen],
    env: { PATH: process.env.PATH ?? '' },
    ports: new Map([[8080, port]]),
    namedPorts: { ops: 8080 },
    probes: { startup: { httpGet: { path: '/healthz', port: 'ops' }, ...budget } },
    uid: undefined,
    terminationGracePeriodSeconds: 5,
  };
  return new RehearsedPod(plan);
}

describe('the rehearsal kubelet', () => {
  it('waits for a start as long as the manifest allows it, whatever the probe periods are scaled to', async () => {
    // Written: 1 s × 3 = 3 s. Scaled as the periods are, the budget would be 0.6 s: a 1.5 s start would fail.
    expect(1 * 3 * TIME_SCALE * 1000).toBeLessThan(1500);
    const pod = await podListeningAfter(1500, { periodSeconds: 1, failureThreshold: 3 });
    try {
      await pod.untilReady();
      expect({ started: pod.started, ready: pod.ready, restarts: pod.wouldRestart }).toEqual({
        started: true,
        ready: true,
        restarts: 0,
      });
      expect(pod.events.filter((e) => e.probe === 'startup' && !e.ok).length).toBeGreaterThan(3);
    } finally {
      await pod.kill();
    }
  });

  it('fails the wait as soon as the startup probe has spent its budget, naming the pod and the probes', async () => {
    const pod = await podListeningAfter(null, { periodSeconds: 1, failureThreshold: 2 });
    try {
      const started = Date.now();
      const err = await pod.untilReady().then(
        () => undefined,
        (e: Error) => e,
      );
      expect(err?.message).toMatch(
        /^slow-start did not start: its startup probe failed 10 times in a row over 2 s \(the kubelet would restart it\); last probes: .*"status":"refused"/,
      );
      // Long before the hang guard (the budget and a minute more): the failure itself ends the wait.
      expect(Date.now() - started).toBeLessThan(pod.readyBoundMs());
      expect(pod.wouldRestart).toBe(1);
    } finally {
      await pod.kill();
    }
  });
});
