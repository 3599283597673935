/*
 * Text widths without a canvas. The option is built before any browser sees it, so layout is planned
 * from widths estimated per character for DejaVu Sans (the font the chart pages and images use; its
 * glyphs are wider than Arial's). Every factor is at or above the font's real advance width, so a box
 * planned from it is never too small: a label may get a little more room than it needs, never less.
 */

const NARROW = new Set("iIjl.,:;'|!()[]{} ");
const SEMI = new Set('frt-/\\"`*');
const WIDE = new Set('mwMW@%');

/** The advance of one character in em. */
function charEm(ch: string): number {
  if (NARROW.has(ch)) return ch === ' ' ? 0.33 : 0.34;
  if (SEMI.has(ch)) return 0.45;
  if (WIDE.has(ch)) return 1.0;
  if (ch >= '0' && ch <= '9') return 0.64;
  if (ch >= 'A' && ch <= 'Z') return 0.74;
  if (ch >= 'a' && ch <= 'z') return 0.62;
  if (ch.charCodeAt(0) > 0x2e7f) return 1.0; // CJK and other full-width scripts
  return 0.7;
}

export function textWidth(text: string, fontSize: number): number {
  let em = 0;
  for (const ch of text) em += charEm(ch);
  return Math.ceil(em * fontSize);
}

export const ELLIPSIS = '…';

/** The longest prefix of `text` that fits `maxWidth` with an ellipsis after it. */
export function truncateText(text: string, maxWidth: number, fontSize: number): string {
  if (textWidth(text, fontSize) <= maxWidth) return text;
  const chars = Array.from(text);
  let lo = 0;
  let hi = chars.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (textWidth(chars.slice(0, mid).join('') + ELLIPSIS, fontSize) <= maxWidth) lo = mid;
    else hi = mid - 1;
  }
  return chars.slice(0, lo).join('').trimEnd() + ELLIPSIS;
}

/** A smaller font (down to `minSize`) before an ellipsis: the text and the size it is drawn at. */
export function fitText(
  text: string,
  maxWidth: number,
  fontSize: number,
  minSize: number,
): { text: string; fontSize: number } {
  for (let size = fontSize; size >= minSize; size--) {
    if (textWidth(text, size) <= maxWidth) return { text, fontSize: size };
  }
  return { text: truncateText(text, maxWidth, minSize), fontSize: minSize };
}

/**
 * Axis numbers as people read them: 1.2K, 3.5M, 1.25B, at most three significant digits. Intl's
 * compact notation is the one both Node and Chromium ship.
 */
const COMPACT = new Intl.NumberFormat('en', { notation: 'compact', maximumSignificantDigits: 3 });
export function compactNumber(v: number): string {
  if (!Number.isFinite(v)) return '';
  return COMPACT.format(v);
}
