import { inspectPng, type PngFacts } from '@quarry/testkit';

export type { PngFacts };

/** Size, ink and the solid fills (colours covering at least `minPixels` pixels) of a PNG. */
export function pngFacts(buf: Buffer, minPixels = 150): Promise<PngFacts> {
  return inspectPng(buf, { minPixels });
}
