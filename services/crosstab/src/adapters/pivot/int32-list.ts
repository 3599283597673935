/** A growable list of 32-bit integers in one typed array: no object per value, nothing for the GC to trace. */
export class Int32List {
  private data = new Int32Array(1024);
  length = 0;

  push(v: number): void {
    if (this.length === this.data.length) {
      const grown = new Int32Array(this.data.length * 2);
      grown.set(this.data);
      this.data = grown;
    }
    this.data[this.length++] = v;
  }

  at(i: number): number {
    return this.data[i];
  }
}
