import { Worker } from 'node:worker_threads';

export interface PngFacts {
  width: number;
  height: number;
  /** Pixels that are not (near) white. */
  inked: number;
  /** Saturated colours covering at least `minPixels` pixels: the solid fills of series. */
  fillColours: number;
  /** The first dark pixel within `edge` pixels of a border ("dark pixel at (x,y)"), when `edge` is asked. */
  edgeInk?: string;
}

/*
 * pngjs decodes an order of magnitude slower inside jest's module sandbox than in plain Node, which made
 * the chart gallery test take minutes. The decoding and the pixel counts run
 * in one worker thread of plain Node instead, loaded from this source text, outside the sandbox.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { PNG } = require(workerData.pngjs);
function facts(buf, minPixels, edge) {
  const png = PNG.sync.read(buf);
  const { width, height, data } = png;
  const counts = new Map();
  let inked = 0;
  for (let i = 0; i < data.length; i += 4) {
    const r = data[i], g = data[i + 1], b = data[i + 2];
    if (r < 245 || g < 245 || b < 245) inked++;
    const max = Math.max(r, g, b), min = Math.min(r, g, b);
    if (max > 0 && (max - min) / max > 0.25) {
      const key = (r << 16) | (g << 8) | b;
      counts.set(key, (counts.get(key) || 0) + 1);
    }
  }
  let fillColours = 0;
  for (const n of counts.values()) if (n >= minPixels) fillColours++;
  let edgeInk;
  if (edge > 0) {
    outer: for (let y = 0; y < height; y++) {
      for (let x = 0; x < width; x++) {
        if (x >= edge && y >= edge && x < width - edge && y < height - edge) continue;
        const i = (y * width + x) * 4;
        if (0.299 * data[i] + 0.587 * data[i + 1] + 0.114 * data[i + 2] < 160) {
          edgeInk = 'dark pixel at (' + x + ',' + y + ')';
          break outer;
        }
      }
    }
  }
  return { width, height, inked, fillColours, edgeInk };
}
parentPort.on('message', ({ id, buf, minPixels, edge }) => {
  try {
    parentPort.postMessage({ id, facts: facts(Buffer.from(buf), minPixels, edge) });
  } catch (err) {
    parentPort.postMessage({ id, error: String((err && err.message) || err) });
  }
});
`;

type Reply = { id: number; facts?: PngFacts; error?: string };

let worker: Worker | undefined;
let nextId = 0;
const waiting = new Map<number, { resolve: (f: PngFacts) => void; reject: (e: Error) => void }>();

function inspector(): Worker {
  if (worker) return worker;
  const w = new Worker(WORKER_SOURCE, { eval: true, workerData: { pngjs: require.resolve('pngjs') } });
  w.on('message', (reply: Reply) => {
    const wait = waiting.get(reply.id);
    waiting.delete(reply.id);
    if (reply.facts) wait?.resolve(reply.facts);
    else wait?.reject(new Error(`not a readable PNG: ${reply.error}`));
  });
  w.on('error', (err) => {
    for (const wait of waiting.values()) wait.reject(err);
    waiting.clear();
    worker = undefined;
  });
  // A suite that has finished with it must not be kept alive by it.
  w.unref();
  worker = w;
  return w;
}

/**
 * Size, ink and fill colours of a PNG (and, with `edge`, a dark pixel that close to a border), read in a
 * worker thread. Rejects, naming the problem, on bytes that are not a PNG.
 */
export function inspectPng(buf: Buffer, opts: { minPixels?: number; edge?: number } = {}): Promise<PngFacts> {
  const id = nextId++;
  return new Promise<PngFacts>((resolve, reject) => {
    waiting.set(id, { resolve, reject });
    // A copy: the caller keeps its buffer (it may write it to disk after).
    inspector().postMessage({ id, buf: new Uint8Array(buf), minPixels: opts.minPixels ?? 150, edge: opts.edge ?? 0 });
  });
}
