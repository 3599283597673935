import fs from 'node:fs';
import path from 'node:path';
import type { Browser } from 'puppeteer-core';
import { launchBrowser } from './support/browser';
import { oidcSettings, startOidcProvider, type OidcProvider } from './support/oidc';
import { createIdentity, startStackWithData, type Stack } from './support/stack';

/*
 * The console signs in with the deployment's OpenID provider (docs/identity.md, docs/console.md): in
 * headless Chromium, against a real provider on loopback, the authorization code flow with PKCE from the
 * Sign in button to the provider's login page and back, then who is signed in, their realm's counts, and
 * signing out. Screenshots go to test-output/console/.
 */

const SHOTS = path.join(__dirname, '..', 'test-output', 'console');
let provider: OidcProvider;
let stack: Stack;
let browser: Browser;

beforeAll(async () => {
  provider = await startOidcProvider();
  stack = await startStackWithData({ env: oidcSettings(provider, { QUARRY_OIDC_CLIENT_ID: 'quarry-console' }) });
  // The console's client, registered now that the gateway's address is known.
  const reg = await fetch(`${provider.issuer}/reg`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({
      redirect_uris: [`${stack.quarry.baseUrl}/console/`],
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code'],
      response_types: ['code'],
    }),
  });
  if (reg.status !== 201) throw new Error(`registration: HTTP ${reg.status} ${await reg.text()}`);
  const admin = await createIdentity(stack.dataDir, 'root', { admin: true, scopes: 'indexes:write,indexes:read' });
  const csv = 'tenant,amount\nacme,1\nacme,2\nacme,3\nglobex,4\n';
  const up = await fetch(`${stack.quarry.baseUrl}/indexes/orders/records?mode=replace`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${admin.token}`, 'Content-Type': 'text/csv' },
    body: csv,
  });
  if (up.status !== 200) throw new Error(`upload: HTTP ${up.status}`);
  browser = await launchBrowser();
  fs.mkdirSync(SHOTS, { recursive: true });
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await stack?.quarry.stop();
  await provider?.stop();
});

it('signs in at the provider with PKCE, shows who, reads the realm’s rows, and signs out', async () => {
  const page = await browser.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(`${stack.quarry.baseUrl}/console/`, { waitUntil: 'load' });
  await page.waitForSelector('#sign-in', { visible: true });
  await Promise.all([page.waitForNavigation(), page.click('#sign-in')]);
  // The provider's own login page (oidc-provider's development interactions).
  expect(page.url().startsWith(provider.issuer)).toBe(true);
  await page.waitForSelector('input[name=login]');
  await page.type('input[name=login]', 'alice@acme');
  await page.type('input[name=password]', 'any');
  await Promise.all([page.waitForNavigation(), page.click('button[type=submit]')]);
  // Its consent page, for what the console asked: the scopes, then back to the console.
  await page.waitForFunction(() => document.querySelector('h1')?.textContent === 'Authorize');
  expect(await page.$eval('body', (b) => b.textContent)).toContain('query:execute');
  await Promise.all([page.waitForNavigation(), page.click('button[type=submit]')]);
  await page.waitForFunction(
    (base) => location.href.startsWith(`${base}/console/`) && !document.getElementById('whoami')!.hidden,
    { timeout: 60_000 },
    stack.quarry.baseUrl,
  );
  // The code left the address; the signed-in user is shown; their cards count their realm's rows only.
  expect(page.url()).toBe(`${stack.quarry.baseUrl}/console/`);
  expect(await page.$eval('#whoami', (e) => e.textContent)).toMatch(
    /^Signed in as oidc:alice@acme · reads orders, movies · /,
  );
  await page.waitForFunction(() =>
    Array.from(document.querySelectorAll('#index-list .card')).some((c) =>
      /orders[\s\S]*3 records/.test(c.textContent ?? ''),
    ),
  );
  await page.screenshot({ path: path.join(SHOTS, 'sign-in.png') });
  await page.click('#forget');
  await page.waitForFunction(() => document.getElementById('whoami')!.hidden);
  expect(await page.evaluate(() => sessionStorage.getItem('quarry.console.token'))).toBeNull();
  expect(errors).toEqual([]);
  await page.close();
});

it('says why when the provider sends back a refusal or a state this tab did not start, and signs nobody in', async () => {
  const page = await browser.newPage();
  await page.goto(`${stack.quarry.baseUrl}/console/?error=access_denied&error_description=the+user+said+no`, {
    waitUntil: 'networkidle0',
  });
  await page.waitForFunction(() =>
    /the user said no/.test(document.querySelector('#panel-indexes .error')?.textContent ?? ''),
  );
  await page.goto(`${stack.quarry.baseUrl}/console/?code=stolen&state=forged`, { waitUntil: 'networkidle0' });
  await page.waitForFunction(() =>
    /not started from this tab/.test(document.querySelector('#panel-indexes .error')?.textContent ?? ''),
  );
  expect(page.url()).toBe(`${stack.quarry.baseUrl}/console/`);
  expect(await page.$eval('#whoami', (e) => (e as HTMLElement).hidden)).toBe(true);
  await page.close();
});
