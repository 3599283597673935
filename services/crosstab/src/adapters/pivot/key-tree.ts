import type { AxisValue } from '../../domain/axis-value';

/**
 * The distinct key prefixes of one side (rows or columns), each interned once as a small integer: a
 * cell's key at every depth is then a node of this tree, and a group is found by numbers, not by texts
 * made per cell and level (which cost time per cell and most of the service's garbage).
 */
export class KeyTree {
  /** The key of each node, from the root (node 0, the empty key). */
  readonly keys: AxisValue[][] = [[]];
  readonly parent: number[] = [-1];
  private readonly children: Array<Map<AxisValue, number> | undefined> = [undefined];

  /** The node under `node` for `value`. Blank text and null are one key upstream; JSON made NaN and ±Infinity null, and so does this. */
  child(node: number, value: AxisValue): number {
    const k = typeof value === 'number' && !Number.isFinite(value) ? null : value;
    let map = this.children[node];
    if (!map) {
      map = new Map();
      this.children[node] = map;
    }
    let id = map.get(k);
    if (id === undefined) {
      id = this.keys.length;
      map.set(k, id);
      this.keys.push([...this.keys[node], value]);
      this.parent.push(node);
      this.children.push(undefined);
    }
    return id;
  }

  /** The ancestor `up` levels above `node`. */
  up(node: number, up: number): number {
    let n = node;
    for (let i = 0; i < up; i++) n = this.parent[n];
    return n;
  }
}
