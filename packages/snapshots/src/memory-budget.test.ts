import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { defaultDuckDbMemoryBytes, engineOptions, exportEngineOptions, processMemoryBytes } from './memory-budget';

const files = (map: Record<string, string>) => (file: string) => {
  if (file in map) return map[file];
  throw Object.assign(new Error('ENOENT'), { code: 'ENOENT' });
};
const GiB = 1024 ** 3;

describe('the process memory budget (cgroup-aware)', () => {
  it('takes the cgroup v2 limit, then v1, then the machine', () => {
    expect(processMemoryBytes(files({ '/sys/fs/cgroup/memory.max': `${2 * GiB}\n` }))).toBe(2 * GiB);
    expect(processMemoryBytes(files({ '/sys/fs/cgroup/memory/memory.limit_in_bytes': `${GiB}` }))).toBe(GiB);
    expect(processMemoryBytes(files({ '/sys/fs/cgroup/memory.max': 'max\n' }))).toBe(os.totalmem());
    expect(processMemoryBytes(files({}))).toBe(os.totalmem());
  });

  it('never exceeds the machine (cgroup v1 reports "no limit" as a huge number)', () => {
    expect(processMemoryBytes(files({ '/sys/fs/cgroup/memory/memory.limit_in_bytes': '9223372036854771712' }))).toBe(
      os.totalmem(),
    );
  });

  it('gives DuckDB half of it, at least 128 MiB, and the open indexes a quarter of that', () => {
    expect(defaultDuckDbMemoryBytes(4 * GiB)).toBe(2 * GiB);
    expect(defaultDuckDbMemoryBytes(100 * 1024 * 1024)).toBe(128 * 1024 * 1024);
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'q-budget-'));
    const o = engineOptions({ dataDir, duckdbMemoryBytes: GiB, openIndexBytes: undefined });
    expect(o).toMatchObject({ memoryLimitBytes: GiB, indexBudgetBytes: GiB / 4 });
    expect(o.tempDirectory).toMatch(new RegExp(`^${dataDir}/tmp/duckdb-\\d+-[0-9a-f]{6}$`));
    expect(engineOptions({ dataDir, duckdbMemoryBytes: GiB, openIndexBytes: 0 }).indexBudgetBytes).toBe(0);
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('spills where QUARRY_DUCKDB_TEMP_DIR says, else outside a data directory it cannot write', () => {
    const set = { dataDir: '/data', duckdbMemoryBytes: GiB, openIndexBytes: undefined };
    expect(engineOptions({ ...set, duckdbTempDir: '/spill' }).tempDirectory).toMatch(/^\/spill\/duckdb-/);
    // Under a file nothing can be created, even by root: as a read-only snapshot volume.
    expect(
      engineOptions({ ...set, dataDir: '/dev/null/data' }).tempDirectory.startsWith(`${os.tmpdir()}/duckdb-`),
    ).toBe(true);
  });

  it('gives exports a DuckDB of their own: their limit, their own spill folder beside the engine’s, the same cap', () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'q-budget-'));
    const mib = 1024 * 1024;
    const o = exportEngineOptions({ dataDir, exportMemoryBytes: 192 * mib, duckdbTempMaxBytes: 3072 * mib });
    expect(o).toMatchObject({ memoryLimitBytes: 192 * mib, maxTempBytes: 3072 * mib, indexBudgetBytes: 48 * mib });
    expect(o.tempDirectory).toMatch(new RegExp(`^${dataDir}/tmp/export-\\d+-[0-9a-f]{6}$`));
    const engine = engineOptions({ dataDir, duckdbMemoryBytes: undefined, openIndexBytes: undefined });
    expect(path.dirname(engine.tempDirectory)).toBe(path.dirname(o.tempDirectory));
    expect(engine.tempDirectory).not.toBe(o.tempDirectory);
    expect(exportEngineOptions({ dataDir, exportMemoryBytes: mib, duckdbTempDir: '/spill' }).tempDirectory).toMatch(
      /^\/spill\/export-/,
    );
    fs.rmSync(dataDir, { recursive: true, force: true });
  });
});
