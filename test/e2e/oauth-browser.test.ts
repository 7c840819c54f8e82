// A real browser on the authorization page (docs/oauth.md#the-authorization-page, GET and POST): Debian
// Chromium driven by playwright-core with executablePath (docs/development.md) opens the page of the spawned
// bin, is shown the client's name and redirect host, reaches the password field by its label, types a wrong
// password (401, the form again with an announced message), then the right one, and lands on a local callback
// with code, state and iss; the code then buys a token. Also: the page refuses to be framed (frame-ancestors
// 'none') and fits a phone's width. Screenshots go to test-artifacts/ (git-ignored). No Chromium: skipped
// with the reason printed; under CI=true, a failure.
import { existsSync, mkdirSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, type SpawnedServer } from '../helpers/server.js';
import { makeWorkspace, type TempWorkspace } from '../helpers/workspace.js';
import { authorizeUrl, PASSWORD, pkce, register, token, toolsList, startOAuthBin } from './oauth-helpers.js';
import { importCached, missingReason, type Playwright } from '../helpers/cached-tools.js';
import { CHROMIUM, CHROMIUM_ARGS } from '../helpers/chromium.js';

const CI = process.env.CI === 'true' || process.env.CI === '1';
const ARTIFACTS = path.join(REPO_ROOT, 'test-artifacts');

const browserMissing = !existsSync(CHROMIUM)
  ? `${CHROMIUM} not found (Debian: apt-get install -y chromium)`
  : missingReason('playwright-core');

describe('Chromium and playwright-core for the browser test', () => {
  it('are present (required under CI=true)', () => {
    if (browserMissing) {
      console.warn(`[oauth-browser] skipped: ${browserMissing}`);
      if (CI) expect.fail(`CI=true but ${browserMissing}`);
    }
  });
});

describe.skipIf(Boolean(browserMissing))('the authorization page in headless Chromium', () => {
  let ws: TempWorkspace;
  let server: SpawnedServer;
  let callback: http.Server;
  let callbackBase = '';
  const received: URL[] = [];
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  let browser: any;

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    ws = makeWorkspace({ 'README.md': '# demo\n' });
    server = await startOAuthBin(ws.dir);
    // The client's local callback, and a page of another origin that tries to frame the authorization page.
    callback = http.createServer((req, res) => {
      const url = new URL(req.url ?? '/', callbackBase);
      if (url.pathname === '/callback') {
        received.push(url);
        res
          .writeHead(200, { 'content-type': 'text/html' })
          .end('<!doctype html><title>Callback</title><h1>Signed in</h1>');
      } else if (url.pathname === '/frame') {
        const target = url.searchParams.get('target') ?? '';
        res
          .writeHead(200, { 'content-type': 'text/html' })
          .end(
            `<!doctype html><title>Framer</title><iframe id="f" src="${target.replace(/"/g, '&quot;')}" width="600" height="400"></iframe>`,
          );
      } else res.writeHead(404).end();
    });
    await new Promise<void>((r) => callback.listen(0, '127.0.0.1', () => r()));
    callbackBase = `http://127.0.0.1:${(callback.address() as AddressInfo).port}`;
    const { chromium } = await importCached<Playwright>('playwright-core');
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, timeout: 60_000 });
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await new Promise<void>((r) => (callback ? callback.close(() => r()) : r()));
    await server?.stop();
    ws?.cleanup();
  });

  async function newRequest(name: string) {
    const redirect = `${callbackBase}/callback`;
    const reg = await register(server.base, { redirect_uris: [redirect], client_name: name });
    expect(reg.status).toBe(201);
    const p = pkce();
    const url = authorizeUrl(server.base, {
      response_type: 'code',
      client_id: reg.json.client_id,
      redirect_uri: redirect,
      code_challenge: p.challenge,
      code_challenge_method: 'S256',
      state: 'browser-state',
      resource: server.url,
    });
    return { url, redirect, clientId: reg.json.client_id as string, verifier: p.verifier };
  }

  it('shows the client, refuses a wrong password, accepts the right one and lands on the callback with a code', async () => {
    const req = await newRequest('Browser Test App');
    const context = await browser.newContext({ viewport: { width: 800, height: 700 } });
    const page = await context.newPage();
    const first = await page.goto(req.url);
    expect(first.status()).toBe(200);
    expect(await page.title()).toContain('Authorize');
    await expect(page.getByText('Browser Test App').isVisible()).resolves.toBe(true);
    await expect(page.getByText(new URL(callbackBase).host).first().isVisible()).resolves.toBe(true);
    await page.screenshot({ path: path.join(ARTIFACTS, 'oauth-authorize-page.png'), fullPage: true });

    // The field is reachable by its accessible label; the button by its role and name.
    const password = page.getByLabel('Server password');
    await password.fill('not the password');
    const [wrong] = await Promise.all([
      page.waitForResponse((r: { request(): { method(): string } }) => r.request().method() === 'POST'),
      page.getByRole('button', { name: 'Authorize' }).click(),
    ]);
    expect(wrong.status()).toBe(401);
    await page.waitForLoadState();
    await expect(page.getByRole('alert').textContent()).resolves.toContain('Wrong password');
    await page.screenshot({
      path: path.join(ARTIFACTS, 'oauth-authorize-wrong-password.png'),
      fullPage: true,
    });

    await page.getByLabel('Server password').fill(PASSWORD);
    await Promise.all([
      page.waitForURL(`${callbackBase}/callback?**`),
      page.getByRole('button', { name: 'Authorize' }).click(),
    ]);
    await expect(page.getByText('Signed in').isVisible()).resolves.toBe(true);
    const landed = received.at(-1) as URL;
    expect(landed.searchParams.get('state')).toBe('browser-state');
    expect(landed.searchParams.get('iss')).toBe(server.base);
    const code = landed.searchParams.get('code') as string;
    expect(code).toMatch(/^[A-Za-z0-9_-]{43}$/);
    await context.close();

    const t = await token(server.base, {
      grant_type: 'authorization_code',
      code,
      redirect_uri: req.redirect,
      client_id: req.clientId,
      code_verifier: req.verifier,
      resource: server.url,
    });
    expect(t.status).toBe(200);
    expect((await toolsList(server.url, t.json.access_token)).status).toBe(200);
  }, 180_000);

  it('fits a phone screen without horizontal scrolling', async () => {
    const req = await newRequest('Phone Test');
    const context = await browser.newContext({
      viewport: { width: 360, height: 740 },
      deviceScaleFactor: 2,
      isMobile: true,
      hasTouch: true,
    });
    const page = await context.newPage();
    await page.goto(req.url);
    // A string expression: this file is type-checked without the DOM library.
    const { scrollWidth, innerWidth, fontSize } = (await page.evaluate(
      `({ scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth,
          fontSize: parseFloat(getComputedStyle(document.querySelector('input[type=password]')).fontSize) })`,
    )) as { scrollWidth: number; innerWidth: number; fontSize: number };
    expect(scrollWidth).toBeLessThanOrEqual(innerWidth);
    expect(fontSize).toBeGreaterThanOrEqual(16); // no zoom-on-focus on phones, readable
    await page.screenshot({ path: path.join(ARTIFACTS, 'oauth-authorize-phone.png'), fullPage: true });
    await context.close();
  }, 180_000);

  it('refuses to be framed by another origin (frame-ancestors none, X-Frame-Options DENY)', async () => {
    const req = await newRequest('Framed App');
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${callbackBase}/frame?target=${encodeURIComponent(req.url)}`, { waitUntil: 'load' });
    const frame = page.frames().find((f: { parentFrame(): unknown }) => f.parentFrame() !== null);
    expect(frame).toBeDefined();
    // Chromium replaces a refused frame with its error page: the form never renders inside the frame.
    expect(frame.url()).not.toBe(req.url);
    expect(await frame.locator('#password').count()).toBe(0);
    // Control: the same page opened at top level has the field.
    await page.goto(req.url);
    expect(await page.locator('#password').count()).toBe(1);
    await context.close();
  }, 180_000);
});
