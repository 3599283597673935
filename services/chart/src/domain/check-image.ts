import { SaxesParser } from 'saxes';
import { AppError } from '@quarry/errors';

// PNG (ISO/IEC 15948 §5.2, §11.2.2): the 8-byte signature, then IHDR first (length 13) with the width and
// height as big-endian 32-bit integers; the file ends with the empty IEND chunk and its fixed CRC.
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const IHDR = Buffer.from([0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52]);
const IEND = Buffer.from([0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82]);
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const SVG_NS = 'http://www.w3.org/2000/svg';

function refuse(what: string): AppError {
  // A worker (or whatever wrote to the queue's Redis) handed back something else than was asked: the
  // caller gets an error, never those bytes.
  return AppError.internal(`The chart worker returned ${what}; the image was not returned`);
}

/** The chart as base64 is a whole PNG of exactly width x height pixels. */
export function checkPng(base64: string, width: number, height: number): void {
  if (base64.length < 76 || base64.length % 4 !== 0 || !BASE64.test(base64)) throw refuse('no PNG (not base64 of one)');
  // 44 characters decode to the first 33 bytes: signature, IHDR's length and type, width, height.
  const head = Buffer.from(base64.slice(0, 44), 'base64');
  if (!head.subarray(0, 8).equals(PNG_SIGNATURE) || !head.subarray(8, 16).equals(IHDR))
    throw refuse('no PNG (its first bytes are not a PNG signature and header)');
  const w = head.readUInt32BE(16);
  const h = head.readUInt32BE(20);
  if (w !== width || h !== height) throw refuse(`a PNG of ${w}x${h} pixels where ${width}x${height} were asked`);
  // The last 24 characters decode to the last 16 to 18 bytes (padding drops out in decoding).
  if (!Buffer.from(base64.slice(-24), 'base64').subarray(-12).equals(IEND)) throw refuse('a PNG cut short (no IEND)');
}

class RootFound extends Error {}

/** The chart's SVG text has an `<svg>` root in the SVG namespace whose width and height are those asked. */
export function checkSvg(text: string, width: number, height: number): void {
  let root: { name: string; uri: string; attributes: Record<string, string> } | undefined;
  const parser = new SaxesParser({ xmlns: true });
  parser.on('opentag', (tag) => {
    const attributes: Record<string, string> = {};
    for (const [name, attr] of Object.entries(tag.attributes)) attributes[name] = String(attr.value);
    root = { name: tag.local ?? tag.name, uri: tag.uri ?? '', attributes };
    // Only the root is checked: the rest is ECharts' own output, and parsing 4000x4000 charts whole
    // would cost the service's event loop time for nothing.
    throw new RootFound();
  });
  try {
    // The root's opening tag sits within the first few kilobytes (after an optional prolog).
    for (let at = 0; at < text.length && !root; at += 4096) parser.write(text.slice(at, at + 4096));
  } catch (err) {
    if (!(err instanceof RootFound)) throw refuse('no SVG (it does not parse as XML)');
  }
  if (!root) throw refuse('no SVG (no root element)');
  if (root.name !== 'svg' || root.uri !== SVG_NS) throw refuse(`no SVG (its root element is <${root.name}>)`);
  const w = root.attributes.width;
  const h = root.attributes.height;
  if (w !== String(width) || h !== String(height))
    throw refuse(`an SVG of ${w ?? '?'}x${h ?? '?'} where ${width}x${height} were asked`);
}

// PDF (ISO 32000-1 §7.5.2, §7.5.5): a header "%PDF-1.x" first, "%%EOF" at the end (a line break may follow).
const PDF_HEADER = /^%PDF-\d\.\d/;
const PDF_END = /%%EOF\s*$/;

/** The print as base64 is a whole PDF file: its header first, its end-of-file marker last. */
export function checkPdf(base64: string): void {
  if (base64.length < 16 || base64.length % 4 !== 0 || !BASE64.test(base64)) throw refuse('no PDF (not base64 of one)');
  if (!PDF_HEADER.test(Buffer.from(base64.slice(0, 12), 'base64').toString('latin1')))
    throw refuse('no PDF (its first bytes are not a PDF header)');
  if (!PDF_END.test(Buffer.from(base64.slice(-16), 'base64').toString('latin1')))
    throw refuse('a PDF cut short (no %%EOF)');
}
