import { PNG } from 'pngjs';
import { inspectPng } from './png-inspector';

/** A white PNG of `width` x `height` with the listed pixels painted (r, g, b). */
function png(width: number, height: number, paint: Array<[number, number, [number, number, number]]>): Buffer {
  const img = new PNG({ width, height });
  img.data.fill(255);
  for (const [x, y, [r, g, b]] of paint) img.data.set([r, g, b, 255], (y * width + x) * 4);
  return PNG.sync.write(img);
}

describe('inspectPng (the chart tests read their images with it)', () => {
  it('reads the size, the inked pixels, the solid fills and a dark pixel near the edge', async () => {
    const fill: Array<[number, number, [number, number, number]]> = [];
    for (let x = 10; x < 30; x++) for (let y = 10; y < 20; y++) fill.push([x, y, [200, 30, 30]]);
    const buf = png(40, 30, [...fill, [1, 1, [0, 0, 0]]]);
    expect(await inspectPng(buf, { minPixels: 150, edge: 3 })).toEqual({
      width: 40,
      height: 30,
      inked: 201,
      fillColours: 1,
      edgeInk: 'dark pixel at (1,1)',
    });
    // The same dark pixel well inside the border is no edge ink; fewer pixels than minPixels are no fill.
    const inside = await inspectPng(png(40, 30, [...fill, [20, 25, [0, 0, 0]]]), { minPixels: 300, edge: 3 });
    expect(inside).toMatchObject({ inked: 201, fillColours: 0, edgeInk: undefined });
  });

  it('rejects bytes that are not a PNG, and goes on reading the next ones', async () => {
    await expect(inspectPng(Buffer.from('not a png at all'))).rejects.toThrow(/not a readable PNG/);
    expect((await inspectPng(png(3, 2, []))).width).toBe(3);
  });
});
