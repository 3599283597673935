import type { Row } from '@quarry/snapshots';
import { RollupCells } from './rollup-cells';

const rows = (n: number, tag = 'x'): Row[] => Array.from({ length: n }, (_, i) => ({ tag, i }));

describe('RollupCells', () => {
  it('reads a statement once, then answers it from memory; its parameters are part of it', async () => {
    const kept = new RollupCells();
    const run = jest.fn(async () => rows(3));
    const a = await kept.read('SELECT 1', { p: 1n }, run);
    const b = await kept.read('SELECT 1', { p: 1n }, run);
    expect(b).toBe(a);
    expect(run).toHaveBeenCalledTimes(1);
    // 1n and '1n' or 1 are other values: read again, each.
    await kept.read('SELECT 1', { p: '1n' }, run);
    await kept.read('SELECT 1', { p: 1 }, run);
    await kept.read('SELECT 2', { p: 1n }, run);
    expect(run).toHaveBeenCalledTimes(4);
  });

  it('keeps no failure: an aborted or failed read runs again next time', async () => {
    const kept = new RollupCells();
    await expect(kept.read('SELECT 1', {}, async () => Promise.reject(new Error('aborted')))).rejects.toThrow(
      'aborted',
    );
    const run = jest.fn(async () => rows(1));
    await kept.read('SELECT 1', {}, run);
    expect(run).toHaveBeenCalledTimes(1);
    expect(kept.size).toBe(1);
  });

  it('keeps at most 64 statements, the least recently used going first', async () => {
    const kept = new RollupCells();
    for (let i = 0; i < 64; i++) await kept.read(`SELECT ${i}`, {}, async () => rows(1));
    await kept.read('SELECT 0', {}, async () => rows(1)); // used again: now the most recent
    await kept.read('SELECT 64', {}, async () => rows(1));
    expect(kept.size).toBe(64);
    const run = jest.fn(async () => rows(1));
    await kept.read('SELECT 0', {}, run);
    expect(run).not.toHaveBeenCalled();
    await kept.read('SELECT 1', {}, run);
    expect(run).toHaveBeenCalledTimes(1);
  });

  it('does not keep a statement of more than 50,000 cells, nor more than 400,000 cells in all', async () => {
    const kept = new RollupCells();
    await kept.read('big', {}, async () => rows(50_001));
    expect(kept.size).toBe(0);
    for (let i = 0; i < 9; i++) await kept.read(`SELECT ${i}`, {}, async () => rows(50_000));
    // 9 x 50,000 > 400,000: the oldest went.
    expect(kept.size).toBe(8);
    const run = jest.fn(async () => rows(1));
    await kept.read('SELECT 0', {}, run);
    expect(run).toHaveBeenCalledTimes(1);
  });

  it('counts a statement read by two calls at once once', async () => {
    const kept = new RollupCells();
    // Both calls miss, both read; were both counted, 9 such pairs (225,000 cells, counted as 450,000)
    // would push out statements that fit.
    for (let i = 0; i < 9; i++)
      await Promise.all([
        kept.read(`SELECT ${i}`, {}, async () => rows(25_000)),
        kept.read(`SELECT ${i}`, {}, async () => rows(25_000)),
      ]);
    expect(kept.size).toBe(9);
    const run = jest.fn(async () => rows(1));
    for (let i = 0; i < 9; i++) await kept.read(`SELECT ${i}`, {}, run);
    expect(run).not.toHaveBeenCalled();
  });

  it('forgets everything when cleared', async () => {
    const kept = new RollupCells();
    await kept.read('SELECT 1', {}, async () => rows(1));
    kept.clear();
    const run = jest.fn(async () => rows(1));
    await kept.read('SELECT 1', {}, run);
    expect(run).toHaveBeenCalledTimes(1);
  });
});
