import { PNG } from 'pngjs';

export interface PngFacts {
  width: number;
  height: number;
  /** Pixels that are not (near) white. */
  inked: number;
  /** Saturated colours covering at least `minPixels` pixels: the solid fills of series. */
  fillColours: number;
}

function saturation(r: number, g: number, b: number): number {
  const max = Math.max(r, g, b);
  const min = Math.min(r, g, b);
  return max === 0 ? 0 : (max - min) / max;
}

export function pngFacts(buf: Buffer, minPixels = 150): PngFacts {
  const png = PNG.sync.read(buf);
  const counts = new Map<number, number>();
  let inked = 0;
  for (let i = 0; i < png.data.length; i += 4) {
    const [r, g, b] = [png.data[i], png.data[i + 1], png.data[i + 2]];
    if (r < 245 || g < 245 || b < 245) inked++;
    if (saturation(r, g, b) > 0.25) {
      const key = (r << 16) | (g << 8) | b;
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
  }
  const fillColours = [...counts.values()].filter((n) => n >= minPixels).length;
  return { width: png.width, height: png.height, inked, fillColours };
}
