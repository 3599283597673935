import fs from 'node:fs';
import os from 'node:os';

/** glibc's RTLD_NODELETE: Node's `os.constants.dlopen` does not list it. */
const RTLD_NODELETE = 0x1000;

/**
 * Keeps the native addons this process has mapped whose paths match `pattern` loaded until it ends, and
 * returns their paths.
 *
 * Node unloads (dlclose) the addons a worker thread loaded when that thread ends. chDB's library
 * (ClickHouse, about 550 MB) is then unmapped while its own thread pools still wait inside it and the
 * ending thread still holds keys whose destructors are in it: the thread's exit jumps to code that is no
 * longer there, and the process dies of SIGSEGV (every stop of a server whose crosstab thread had run
 * ClickHouse). Loading the addon once more with RTLD_NODELETE makes every later dlclose of it, and of the
 * libraries it needs, a no-op. Reads /proc/self/maps: on a system without it, nothing is pinned.
 */
export function pinLoadedAddons(pattern: RegExp): string[] {
  let maps: string;
  try {
    maps = fs.readFileSync('/proc/self/maps', 'utf8');
  } catch {
    return [];
  }
  const paths = new Set<string>();
  for (const line of maps.split('\n')) {
    const at = line.indexOf('/');
    if (at < 0) continue;
    const file = line.slice(at);
    if (file.endsWith('.node') && pattern.test(file)) paths.add(file);
  }
  for (const file of paths) process.dlopen({ exports: {} }, file, os.constants.dlopen.RTLD_NOW | RTLD_NODELETE);
  return [...paths];
}
