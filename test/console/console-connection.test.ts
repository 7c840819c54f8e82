// The console's Connection section in headless Chromium (docs/console.md#what-it-shows): the QR code encodes the
// public URL (a phone cannot reach a loopback one; without a public URL there is no QR code and the page says
// why), Copy puts a client's settings on the clipboard with the real bearer token in place of TOKEN, and at
// 390 px a URL wraps only between its parts, never inside its path; a client that only connected (initialize,
// server/discover) is listed with its name, version, era and when it was last seen.
import { existsSync } from 'node:fs';
import { renderSVG } from 'uqr';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, request, send } from '../helpers/raw-http.js';
import { startServer, TEST_TOKEN, type SpawnedServer } from '../helpers/server.js';
import { makeWorkspace, type TempWorkspace } from '../helpers/workspace.js';
import { missingReason, importCached, type Playwright } from '../helpers/cached-tools.js';
import { CHROMIUM, CHROMIUM_ARGS, consoleLink, requireOrSkip } from './support.js';

const missing = requireOrSkip(
  'the console connection test',
  !existsSync(CHROMIUM)
    ? `${CHROMIUM} not found (Debian: apt-get install -y chromium)`
    : missingReason('playwright-core'),
);
const PUBLIC = 'https://quiet-river-bright-field.trycloudflare.com';

/* eslint-disable @typescript-eslint/no-explicit-any -- Playwright is loaded from the tool cache, untyped */
describe.skipIf(missing !== undefined)('the console Connection section in Chromium', () => {
  let ws: TempWorkspace;
  let published: SpawnedServer;
  let local: SpawnedServer;
  let browser: any;

  beforeAll(async () => {
    ws = makeWorkspace({ 'a.txt': 'a\n' });
    published = await startServer({ workspace: ws.dir, env: { SERVICE_SERVER_URL: PUBLIC } });
    local = await startServer({ workspace: ws.dir });
    const { chromium } = await importCached<Playwright>('playwright-core');
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, timeout: 60_000 });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await Promise.all([published?.stop(), local?.stop()]);
    ws?.cleanup();
  });

  async function open(srv: SpawnedServer, width: number): Promise<any> {
    const link = consoleLink(srv.stderr());
    const ctx = await browser.newContext({ viewport: { width, height: 900 } });
    await ctx.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(link).origin });
    const page = await ctx.newPage();
    await page.goto(link);
    await page.waitForSelector('body[data-ready="yes"]', { timeout: 30_000 });
    await page.locator('#connection-body dl').waitFor({ timeout: 30_000 });
    return page;
  }

  it('the QR code encodes the public URL; Copy fills in the token; at 390 px no URL breaks inside its path', async () => {
    const page = await open(published, 390);
    const src = await page.locator('#connection-body img.qr').getAttribute('src');
    const svg = Buffer.from(String(src).replace(/^data:image\/svg\+xml;base64,/, ''), 'base64').toString();
    expect(svg).toBe(renderSVG(`${PUBLIC}/mcp`, { border: 2 }));
    const copy = page.getByRole('button', { name: 'Copy Claude Code settings' });
    await copy.click();
    // The copy first fetches the token, then writes the clipboard, then the button says how it went: wait for that.
    await page.waitForFunction((el: any) => el.textContent !== 'Copy', await copy.elementHandle(), {
      timeout: 30_000,
    });
    expect(await copy.textContent()).toBe('Copied');
    const copied = await page.evaluate('navigator.clipboard.readText()');
    expect(copied).toBe(
      `claude mcp add --transport http workbench ${PUBLIC}/mcp --header "Authorization: Bearer ${TEST_TOKEN}"`,
    );
    // Each URL's path is laid out on one line: the text of its last part has one box.
    const lines = await page.evaluate(() => {
      const doc = (globalThis as any).document;
      return [...doc.querySelectorAll('[data-url]')].map((el: any) => {
        const path = el.lastElementChild;
        const range = doc.createRange();
        range.selectNodeContents(path);
        return {
          url: el.getAttribute('data-url'),
          path: path.textContent,
          boxes: range.getClientRects().length,
        };
      });
    });
    expect(lines.map((l: any) => l.url)).toEqual([`http://127.0.0.1:${published.port}/mcp`, `${PUBLIC}/mcp`]);
    for (const l of lines) expect(l, JSON.stringify(l)).toMatchObject({ boxes: 1 });
    expect(lines.every((l: any) => l.path.endsWith('/mcp'))).toBe(true);
  });

  it('without a public URL: no QR code of the loopback URL, and the page says why; clients that only connected are listed', async () => {
    const hello = request('handshake', 'initialize', {
      protocolVersion: '2025-06-18',
      capabilities: {},
      clientInfo: { name: 'hello-only-client', version: '1.2.3' },
    });
    expect((await send(local.url, hello, bearer())).status).toBe(200);
    expect((await send(local.url, request('modern', 'server/discover'), bearer())).status).toBe(200);
    const page = await open(local, 1280);
    const clients = page.locator('#client-list li');
    await clients.first().waitFor({ timeout: 30_000 });
    const listed = await clients.allTextContents();
    expect(
      listed.some((t: string) => /^hello-only-client 1\.2\.3 · .* · handshake · last seen /.test(t)),
    ).toBe(true);
    expect(
      listed.some((t: string) => / · 2026-07-28 · last seen /.test(t)),
      listed.join('\n'),
    ).toBe(true);
    expect(await page.locator('#clients-empty').isHidden()).toBe(true);
    expect(await page.locator('#connection-body img.qr').count()).toBe(0);
    expect(await page.locator('[data-no-qr]').textContent()).toContain(
      'only this machine can reach this address',
    );
  });
});
