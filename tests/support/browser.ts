import puppeteer, { type Browser } from 'puppeteer-core';

/** Debian's Chromium (installed by scripts/ensure-system-deps.sh), or the one CHROMIUM_PATH names. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * Headless Chromium as every browser test drives it: no sandbox (tests run as root in CI), no GPU,
 * and no font hinting, so screenshots do not change with the machine's font settings.
 */
export function launchBrowser(): Promise<Browser> {
  return puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--font-render-hinting=none'],
  });
}
