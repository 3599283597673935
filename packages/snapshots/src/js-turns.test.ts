import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { JsTurns } from './js-turns';

describe('JsTurns', () => {
  it('runs passes one at a time, in the order they came, each to its end despite its yields', async () => {
    const turns = new JsTurns();
    const log: string[] = [];
    const pass = (name: string, slices: number) => async () => {
      for (let i = 0; i < slices; i++) {
        log.push(`${name}${i}`);
        await yieldToLoop();
      }
      return name;
    };
    const results = await Promise.all([turns.take(pass('a', 3)), turns.take(pass('b', 2)), turns.take(pass('c', 1))]);
    expect(results).toEqual(['a', 'b', 'c']);
    expect(log).toEqual(['a0', 'a1', 'a2', 'b0', 'b1', 'c0']);
  });

  it('lets the next pass run when one throws, and hands the throw to its own caller only', async () => {
    const turns = new JsTurns();
    const failed = turns.take(async () => {
      await yieldToLoop();
      throw new Error('broken pass');
    });
    const next = turns.take(async () => 'ran');
    await expect(failed).rejects.toThrow('broken pass');
    await expect(next).resolves.toBe('ran');
    expect(turns.queued).toBe(0);
  });
});
