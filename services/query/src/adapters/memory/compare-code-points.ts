/**
 * DuckDB compares text by its UTF-8 bytes, which is code point order; JS `<` compares UTF-16 units,
 * which differs once a string holds characters beyond the BMP next to ones above U+E000.
 */
export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    // A surrogate (U+D800-DFFF) stands for a code point above U+FFFF: it sorts after every BMP unit.
    const sx = x >= 0xd800 && x <= 0xdfff ? x + 0x10000 : x;
    const sy = y >= 0xd800 && y <= 0xdfff ? y + 0x10000 : y;
    return sx - sy;
  }
  return a.length - b.length;
}
