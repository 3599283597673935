import zlib from 'node:zlib';

/**
 * Enough of a PDF reader (ISO 32000-1) to read back what Chromium's print (Skia) writes, written apart
 * from Quarry: the page tree in order, each page's size, and each page's text, decoded through its
 * fonts' ToUnicode maps, Form XObjects included. No PDF package is installed here, nor poppler.
 */
export interface PdfPage {
  /** The MediaBox's width and height, in points. */
  width: number;
  height: number;
  /** The text shown on the page, in the order it is drawn (runs joined without separators). */
  text: string;
}

interface PdfObject {
  dict: string;
  stream?: Buffer;
}

function parseObjects(pdf: Buffer): Map<number, PdfObject> {
  const text = pdf.toString('latin1');
  const objects = new Map<number, PdfObject>();
  const head = /(\d+) 0 obj\s*/g;
  let m: RegExpExecArray | null;
  while ((m = head.exec(text))) {
    const start = m.index + m[0].length;
    const end = text.indexOf('endobj', start);
    const body = text.slice(start, end);
    const at = body.search(/>>\s*stream\r?\n/);
    if (at < 0) objects.set(Number(m[1]), { dict: body });
    else {
      const dict = body.slice(0, at + 2);
      const dataStart =
        start + body.indexOf('stream', at) + 'stream'.length + (body[body.indexOf('stream', at) + 6] === '\r' ? 2 : 1);
      const length = /\/Length (\d+)(?! \d+ R)/.exec(dict);
      const dataEnd = length ? dataStart + Number(length[1]) : text.lastIndexOf('endstream', end);
      let data = pdf.subarray(dataStart, dataEnd);
      if (/\/Filter\s*\/FlateDecode/.test(dict)) data = zlib.inflateSync(data);
      objects.set(Number(m[1]), { dict, stream: data });
    }
    head.lastIndex = end;
  }
  return objects;
}

const ref = (dict: string, key: string): number | undefined => {
  const m = new RegExp(`/${key}\\s+(\\d+) 0 R`).exec(dict);
  return m ? Number(m[1]) : undefined;
};

/** The `<< … >>` that follows `/key` (balanced), or the object a reference there points to. */
function subDict(objects: Map<number, PdfObject>, dict: string, key: string): string | undefined {
  const at = dict.search(new RegExp(`/${key}\\s*(<<|\\d+ 0 R)`));
  if (at < 0) return undefined;
  const rest = dict.slice(at + key.length + 1).trimStart();
  if (!rest.startsWith('<<')) return objects.get(Number(/^(\d+)/.exec(rest)?.[1]))?.dict;
  let depth = 0;
  for (let i = 0; i < rest.length - 1; i++) {
    if (rest.startsWith('<<', i)) {
      depth++;
      i++;
    } else if (rest.startsWith('>>', i)) {
      depth--;
      i++;
      if (depth === 0) return rest.slice(0, i + 1);
    }
  }
  return undefined;
}

/** name → object number, for a resource dictionary's /Font or /XObject entry. */
function named(objects: Map<number, PdfObject>, resources: string | undefined, key: string): Map<string, number> {
  const out = new Map<string, number>();
  const d = resources && subDict(objects, resources, key);
  if (!d) return out;
  for (const m of d.matchAll(/\/([^\s/<>[\]()]+)\s+(\d+) 0 R/g)) out.set(m[1], Number(m[2]));
  return out;
}

interface Font {
  bytes: number;
  map: Map<number, string>;
}

const hexText = (hex: string) => {
  let s = '';
  for (let i = 0; i + 4 <= hex.length; i += 4) s += String.fromCharCode(parseInt(hex.slice(i, i + 4), 16));
  return s;
};

function toUnicode(cmap: string): Font {
  const map = new Map<number, string>();
  const range = /<([0-9A-Fa-f]+)>\s*<([0-9A-Fa-f]+)>/.exec(
    /begincodespacerange([\s\S]*?)endcodespacerange/.exec(cmap)?.[1] ?? '',
  );
  const bytes = range ? range[1].length / 2 : 1;
  for (const block of cmap.matchAll(/beginbfchar([\s\S]*?)endbfchar/g))
    for (const m of block[1].matchAll(/<([0-9A-Fa-f]+)>\s*<([0-9A-Fa-f]+)>/g))
      map.set(parseInt(m[1], 16), hexText(m[2]));
  for (const block of cmap.matchAll(/beginbfrange([\s\S]*?)endbfrange/g))
    for (const m of block[1].matchAll(/<([0-9A-Fa-f]+)>\s*<([0-9A-Fa-f]+)>\s*(<[0-9A-Fa-f]+>|\[[^\]]*\])/g)) {
      const lo = parseInt(m[1], 16);
      const hi = parseInt(m[2], 16);
      if (m[3].startsWith('['))
        [...m[3].matchAll(/<([0-9A-Fa-f]+)>/g)].forEach((d, i) => map.set(lo + i, hexText(d[1])));
      else {
        const base = parseInt(m[3].slice(1, -1), 16);
        for (let c = lo; c <= hi; c++) map.set(c, String.fromCharCode(base + c - lo));
      }
    }
  return { bytes, map };
}

function decode(font: Font | undefined, raw: Buffer): string {
  if (!font) return raw.toString('latin1');
  let s = '';
  for (let i = 0; i + font.bytes <= raw.length; i += font.bytes) {
    const code = font.bytes === 2 ? raw.readUInt16BE(i) : raw[i];
    s += font.map.get(code) ?? '';
  }
  return s;
}

function literal(s: string): Buffer {
  const unescaped = s.replace(/\\([nrtbf()\\]|[0-7]{1,3})/g, (_, e: string) =>
    /^[0-7]/.test(e) ? String.fromCharCode(parseInt(e, 8)) : ({ n: '\n', r: '\r', t: '\t', b: '\b', f: '\f' }[e] ?? e),
  );
  return Buffer.from(unescaped, 'latin1');
}

function contentText(
  objects: Map<number, PdfObject>,
  content: string,
  resources: string | undefined,
  depth = 0,
): string {
  const fonts = named(objects, resources, 'Font');
  const xobjects = named(objects, resources, 'XObject');
  const cache = new Map<string, Font | undefined>();
  const fontOf = (name: string) => {
    if (!cache.has(name)) {
      const f = objects.get(fonts.get(name) ?? -1);
      const tu = f && ref(f.dict, 'ToUnicode');
      const cmap = tu !== undefined ? objects.get(tu)?.stream?.toString('latin1') : undefined;
      cache.set(name, cmap ? toUnicode(cmap) : undefined);
    }
    return cache.get(name);
  };
  let font: Font | undefined;
  let out = '';
  const token =
    /\/([^\s/<>[\]()]+)\s+[-\d.]+\s+Tf|(\[(?:[^\]\\]|\\.)*\])\s*TJ|<([0-9A-Fa-f\s]*)>\s*Tj|\(((?:[^)\\]|\\.)*)\)\s*Tj|\/([^\s/<>[\]()]+)\s+Do/g;
  for (const m of content.matchAll(token)) {
    if (m[1]) font = fontOf(m[1]);
    else if (m[2]) {
      for (const part of m[2].matchAll(/<([0-9A-Fa-f\s]*)>|\(((?:[^)\\]|\\.)*)\)/g))
        out += decode(font, part[1] !== undefined ? Buffer.from(part[1].replace(/\s/g, ''), 'hex') : literal(part[2]));
    } else if (m[3] !== undefined) out += decode(font, Buffer.from(m[3].replace(/\s/g, ''), 'hex'));
    else if (m[4] !== undefined) out += decode(font, literal(m[4]));
    else if (m[5] && depth < 8) {
      const x = objects.get(xobjects.get(m[5]) ?? -1);
      if (x?.stream && /\/Subtype\s*\/Form/.test(x.dict))
        out += contentText(
          objects,
          x.stream.toString('latin1'),
          subDict(objects, x.dict, 'Resources') ?? resources,
          depth + 1,
        );
    }
  }
  return out;
}

/** Every page of the PDF, in the page tree's order. */
export function readPdf(pdf: Buffer): PdfPage[] {
  if (!pdf.subarray(0, 5).equals(Buffer.from('%PDF-'))) throw new Error('not a PDF (no %PDF- header)');
  const objects = parseObjects(pdf);
  const catalog = [...objects.values()].find((o) => /\/Type\s*\/Catalog/.test(o.dict));
  if (!catalog) throw new Error('no /Catalog');
  const pages: PdfPage[] = [];
  const walk = (n: number, inherited: { box?: string; resources?: string }) => {
    const node = objects.get(n);
    if (!node) throw new Error(`page tree names a missing object ${n}`);
    const box = /\/MediaBox\s*\[([^\]]*)\]/.exec(node.dict)?.[1] ?? inherited.box;
    const resources = subDict(objects, node.dict, 'Resources') ?? inherited.resources;
    if (/\/Type\s*\/Pages/.test(node.dict)) {
      const kids = /\/Kids\s*\[([^\]]*)\]/.exec(node.dict)?.[1] ?? '';
      for (const k of kids.matchAll(/(\d+) 0 R/g)) walk(Number(k[1]), { box, resources });
      return;
    }
    const [x0, y0, x1, y1] = (box ?? '0 0 0 0').trim().split(/\s+/).map(Number);
    const contents = /\/Contents\s*(\[[^\]]*\]|\d+ 0 R)/.exec(node.dict)?.[1] ?? '';
    const text = [...contents.matchAll(/(\d+) 0 R/g)]
      .map((c) => contentText(objects, objects.get(Number(c[1]))?.stream?.toString('latin1') ?? '', resources))
      .join('');
    pages.push({ width: x1 - x0, height: y1 - y0, text });
  };
  const root = ref(catalog.dict, 'Pages');
  if (root === undefined) throw new Error('the catalog names no /Pages');
  walk(root, {});
  return pages;
}
