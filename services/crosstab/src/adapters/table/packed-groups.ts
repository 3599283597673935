import { setImmediate as yieldToLoop } from 'node:timers/promises';
import type { AxisValue, GroupRow } from '../../domain/axis-value';

/**
 * A pivot's groups as a few flat arrays, the form in which a big table goes to a render thread: the
 * typed arrays are moved, not copied, and each distinct key array is cloned once. Cloning the groups as
 * objects held the crosstab service's loop and made most of its garbage for a big table
 * (bench/fairness.bench.js measures it).
 */
export interface PackedGroups {
  /** Each distinct key array once (the groups of one pivot share them: see KeyTree). */
  keys: AxisValue[][];
  /** Per group, its row and column key as an index into `keys`. */
  rowKey: Int32Array;
  columnKey: Int32Array;
  /** `width` values per group; an empty value is flagged in `empty` (its slot holds 0). */
  width: number;
  values: Float64Array;
  empty: Uint8Array;
}

/** Groups between two yields while packing: about a millisecond of work. */
const SLICE = 20_000;

export async function packGroups(groups: readonly GroupRow[], width: number): Promise<PackedGroups> {
  const keyAt = new Map<AxisValue[], number>();
  const keys: AxisValue[][] = [];
  const intern = (key: AxisValue[]) => {
    let at = keyAt.get(key);
    if (at === undefined) {
      at = keys.length;
      keyAt.set(key, at);
      keys.push(key);
    }
    return at;
  };
  const n = groups.length;
  const packed: PackedGroups = {
    keys,
    rowKey: new Int32Array(n),
    columnKey: new Int32Array(n),
    width,
    values: new Float64Array(n * width),
    empty: new Uint8Array(n * width),
  };
  for (let g = 0; g < n; g++) {
    if (g % SLICE === SLICE - 1) await yieldToLoop();
    const group = groups[g];
    packed.rowKey[g] = intern(group.rowKey);
    packed.columnKey[g] = intern(group.columnKey);
    for (let m = 0; m < width; m++) {
      const v = group.values[m];
      if (v === null || v === undefined) packed.empty[g * width + m] = 1;
      else packed.values[g * width + m] = v;
    }
  }
  return packed;
}

/** The buffers a message may move instead of copy. */
export function packedBuffers(p: PackedGroups): ArrayBuffer[] {
  return [p.rowKey.buffer, p.columnKey.buffer, p.values.buffer, p.empty.buffer] as ArrayBuffer[];
}

export function unpackGroups(p: PackedGroups): GroupRow[] {
  const groups: GroupRow[] = new Array<GroupRow>(p.rowKey.length);
  for (let g = 0; g < p.rowKey.length; g++) {
    const values: Array<number | null> = new Array<number | null>(p.width);
    for (let m = 0; m < p.width; m++) {
      const at = g * p.width + m;
      values[m] = p.empty[at] ? null : p.values[at];
    }
    groups[g] = { rowKey: p.keys[p.rowKey[g]], columnKey: p.keys[p.columnKey[g]], values };
  }
  return groups;
}
