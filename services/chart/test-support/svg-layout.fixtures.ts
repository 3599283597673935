import { textWidth } from '../src/domain/text-metrics';

/*
 * Text boxes read back from an ECharts SVG, for the legibility tests. A box is the text's extent from its
 * position, anchor, baseline, font size and transform; its width is estimated per character with the
 * same DejaVu Sans figures the renderer measured with (text-metrics.ts, never narrower than the font).
 */

export interface TextBox {
  text: string;
  fontSize: number;
  /** Corners after the transform, in image pixels. */
  corners: Array<[number, number]>;
}

const attr = (tag: string, name: string) => new RegExp(`\\s${name}="([^"]*)"`).exec(tag)?.[1];

const unescape = (s: string) =>
  s
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&');

function matrixOf(transform: string | undefined): [number, number, number, number, number, number] {
  if (!transform) return [1, 0, 0, 1, 0, 0];
  const t = /translate\(([-\d.e]+)[ ,]+([-\d.e]+)\)/.exec(transform);
  if (t) return [1, 0, 0, 1, Number(t[1]), Number(t[2])];
  const m = /matrix\(([^)]*)\)/.exec(transform);
  if (m) return m[1].split(/[ ,]+/).map(Number) as [number, number, number, number, number, number];
  throw new Error(`unknown transform ${transform}`);
}

export function textBoxes(svg: string): TextBox[] {
  if (/<g[^>]*transform=/.test(svg)) throw new Error('a transformed group: boxes would need its matrix too');
  const out: TextBox[] = [];
  for (const m of svg.matchAll(/<text([^>]*)>([^<]*)<\/text>/g)) {
    const [, tag, raw] = m;
    const text = unescape(raw);
    if (text.trim() === '' || /opacity="0"|display:\s*none/.test(tag)) continue;
    const fontSize = Number(/font-size:([\d.]+)px/.exec(tag)?.[1] ?? 12);
    const w = textWidth(text, fontSize);
    const x = Number(attr(tag, 'x') ?? 0);
    const y = Number(attr(tag, 'y') ?? 0);
    const anchor = attr(tag, 'text-anchor') ?? 'start';
    const baseline = attr(tag, 'dominant-baseline') ?? 'alphabetic';
    const x0 = anchor === 'middle' ? x - w / 2 : anchor === 'end' ? x - w : x;
    const y0 =
      baseline === 'central' || baseline === 'middle'
        ? y - fontSize / 2
        : baseline === 'hanging'
          ? y
          : y - fontSize * 0.8;
    const [a, b, c, d, e, f] = matrixOf(attr(tag, 'transform'));
    const at = (px: number, py: number): [number, number] => [a * px + c * py + e, b * px + d * py + f];
    out.push({
      text,
      fontSize,
      corners: [at(x0, y0), at(x0 + w, y0), at(x0 + w, y0 + fontSize), at(x0, y0 + fontSize)],
    });
  }
  return out;
}

/** Separating-axis test of two convex quads, each shrunk by `slack` px so touching is not overlapping. */
export function overlap(p: TextBox, q: TextBox, slack = 1): boolean {
  const shrink = (cs: Array<[number, number]>) => {
    const cx = cs.reduce((s, c) => s + c[0], 0) / 4;
    const cy = cs.reduce((s, c) => s + c[1], 0) / 4;
    return cs.map(([x, y]) => {
      const dx = x - cx;
      const dy = y - cy;
      const len = Math.hypot(dx, dy) || 1;
      const k = Math.max(0, len - slack * Math.SQRT2) / len;
      return [cx + dx * k, cy + dy * k] as [number, number];
    });
  };
  const A = shrink(p.corners);
  const B = shrink(q.corners);
  for (const poly of [A, B]) {
    for (let i = 0; i < 4; i++) {
      const [x1, y1] = poly[i];
      const [x2, y2] = poly[(i + 1) % 4];
      const nx = y2 - y1;
      const ny = x1 - x2;
      const proj = (cs: Array<[number, number]>) => cs.map(([x, y]) => x * nx + y * ny);
      const pa = proj(A);
      const pb = proj(B);
      if (Math.max(...pa) <= Math.min(...pb) || Math.max(...pb) <= Math.min(...pa)) return false;
    }
  }
  return true;
}

export function bounds(box: TextBox) {
  const xs = box.corners.map((c) => c[0]);
  const ys = box.corners.map((c) => c[1]);
  return { left: Math.min(...xs), right: Math.max(...xs), top: Math.min(...ys), bottom: Math.max(...ys) };
}
