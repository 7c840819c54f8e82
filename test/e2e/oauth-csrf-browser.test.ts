// A real browser submitting the password form from another site (the password POST checks
// Origin / Sec-Fetch-Site when present; RFC 9700 §4.7): headless Chromium (docs/development.md)
// loads a page of another origin that holds a copy of the form — with a valid CSRF handle and the right
// password, the strongest forgery there is — and submits it to the spawned bin. Chromium sends
// `Sec-Fetch-Site: same-site` (another port of 127.0.0.1) and that page's Origin; the server answers 403, no code. The same
// browser submitting the real page of the server (same origin, referrer policy same-origin so Origin is not
// `null`) gets the 302 with a code. No Chromium: skipped with the reason printed; under CI=true, a failure.
import { existsSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SpawnedServer } from '../helpers/server.js';
import { makeWorkspace, type TempWorkspace } from '../helpers/workspace.js';
import { CI } from './oauth-cimd-helpers.js';
import { authorizeUrl, getPage, PASSWORD, pkce, register, startOAuthBin } from './oauth-helpers.js';
import { importCached, missingReason, type Playwright } from '../helpers/cached-tools.js';
import { CHROMIUM, CHROMIUM_ARGS } from '../helpers/chromium.js';

const missing = existsSync(CHROMIUM)
  ? missingReason('playwright-core')
  : `${CHROMIUM} not found (apt-get install -y chromium)`;
const haveChromium = !missing;
if (missing) console.warn(`[oauth-csrf-browser] skipped: ${missing}`);

describe('Chromium for the cross-site form test', () => {
  it('is present (required under CI=true)', () => {
    if (missing && CI) expect.fail(`CI=true but ${missing}`);
  });
});

describe.skipIf(!haveChromium)('the password form posted from another site (RFC 9700 §4.7)', () => {
  let ws: TempWorkspace;
  let server: SpawnedServer;
  let other: http.Server;
  let otherBase = '';
  let forged = '';
  const received: string[] = [];
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  let browser: any;

  beforeAll(async () => {
    ws = makeWorkspace({ 'README.md': '# demo\n' });
    server = await startOAuthBin(ws.dir);
    other = http.createServer((req, res) => {
      if (req.url === '/forge') res.writeHead(200, { 'content-type': 'text/html' }).end(forged);
      else {
        received.push(req.url ?? '');
        res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>cb</title>');
      }
    });
    await new Promise<void>((r) => other.listen(0, '127.0.0.1', () => r()));
    otherBase = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
    const { chromium } = await importCached<Playwright>('playwright-core');
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, timeout: 60_000 });
  }, 180_000);
  afterAll(async () => {
    await browser?.close();
    await new Promise<void>((r) => (other ? other.close(() => r()) : r()));
    await server?.stop();
    ws?.cleanup();
  });

  async function pendingRequest(): Promise<{ url: string; handle: string }> {
    const redirect = `${otherBase}/callback`;
    const reg = await register(server.base, { redirect_uris: [redirect], client_name: 'CSRF Test' });
    const url = authorizeUrl(server.base, {
      response_type: 'code',
      client_id: reg.json.client_id,
      redirect_uri: redirect,
      code_challenge: pkce().challenge,
      code_challenge_method: 'S256',
    });
    const page = await getPage(url);
    return { url, handle: page.handle ?? '' };
  }

  it('a form on another origin carrying a valid handle and the password → 403, no code', async () => {
    const { handle } = await pendingRequest();
    forged = `<!doctype html><form id="f" method="post" action="${server.base}/oauth/authorize">
<input type="hidden" name="request" value="${handle}"><input type="hidden" name="password" value="${PASSWORD}">
<input type="hidden" name="action" value="approve"></form>`;
    const page = await (await browser.newContext()).newPage();
    await page.goto(`${otherBase}/forge`);
    const [response] = await Promise.all([
      page.waitForResponse((r: { url(): string }) => r.url().startsWith(`${server.base}/oauth/authorize`)),
      page.evaluate(`document.getElementById('f').submit()`), // a string: no DOM library in this build
    ]);
    expect(response.status()).toBe(403);
    const headers = await response.request().allHeaders();
    // Another port of 127.0.0.1 is another origin of the same site: Chromium says same-site, still refused.
    expect(headers['sec-fetch-site']).toBe('same-site');
    expect(headers.origin).toBe(otherBase);
    await page.waitForLoadState();
    expect(await page.textContent('body')).toContain('submitted from another site');
    expect(received.filter((u) => u.includes('code='))).toEqual([]);
  }, 120_000);

  it('the real page of the server, submitted in the same browser → 302 to the callback with a code', async () => {
    const { url } = await pendingRequest();
    const page = await (await browser.newContext()).newPage();
    await page.goto(url);
    await page.getByLabel('Server password').fill(PASSWORD);
    const [post] = await Promise.all([
      page.waitForRequest((r: { method(): string }) => r.method() === 'POST'),
      page.waitForURL(`${otherBase}/callback?**`),
      page.getByRole('button', { name: 'Authorize' }).click(),
    ]);
    const headers = await post.allHeaders();
    expect(headers['sec-fetch-site']).toBe('same-origin');
    expect(headers.origin).toBe(server.base);
    expect(new URL(page.url()).searchParams.get('code')).toBeTruthy();
  }, 120_000);
});
