import type { Int32List } from './int32-list';

/**
 * Texts joined by one separator, each distinct text numbered once (0, 1, …). An open-addressing table
 * hashed over the joined text's code units: the texts are compared in place (same length, startsWith at
 * the offset), so no substring is made for a text already seen. Splitting and a Map cost three times as
 * much for the few short values a cell of a distinct count lists.
 */
export class TextInterner {
  private table = new Int32Array(1024);
  private readonly texts: string[] = [];

  /** How many distinct texts were seen. */
  get size(): number {
    return this.texts.length;
  }

  /** Adds the numbers of the texts `joined` holds (separated by the code unit `separator`) to `into`. */
  codes(joined: string, separator: number, into: Int32List): void {
    let from = 0;
    for (;;) {
      let h = 0x811c9dc5 | 0;
      let to = from;
      for (; to < joined.length; to++) {
        const ch = joined.charCodeAt(to);
        if (ch === separator) break;
        h = Math.imul(h ^ ch, 16777619);
      }
      into.push(this.code(joined, from, to, h));
      if (to >= joined.length) return;
      from = to + 1;
    }
  }

  private code(joined: string, from: number, to: number, hash: number): number {
    const mask = this.table.length - 1;
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const at = this.table[slot];
      if (at === 0) break;
      const text = this.texts[at - 1];
      if (text.length === to - from && joined.startsWith(text, from)) return at - 1;
    }
    const code = this.texts.length;
    this.texts.push(joined.slice(from, to));
    // Kept at most half full, so a probe ends soon at an empty slot.
    if (2 * this.texts.length > this.table.length) this.grow();
    else this.place(code, hash);
    return code;
  }

  private grow(): void {
    this.table = new Int32Array(this.table.length * 2);
    for (let code = 0; code < this.texts.length; code++) this.place(code, hashOf(this.texts[code]));
  }

  private place(code: number, hash: number): void {
    const mask = this.table.length - 1;
    let slot = hash & mask;
    while (this.table[slot] !== 0) slot = (slot + 1) & mask;
    this.table[slot] = code + 1;
  }
}

function hashOf(text: string): number {
  let h = 0x811c9dc5 | 0;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
  return h;
}
