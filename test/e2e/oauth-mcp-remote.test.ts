// mcp-remote (the OAuth-capable stdio⇄HTTP bridge many desktop clients use) against the spawned bin in oauth
// mode (docs/oauth.md#tested-with): `mcp-remote-client <url>` discovers, registers
// (application_type native, a localhost callback), and opens the authorize URL through $BROWSER — here a
// script that fetches the page, submits the password form and follows the 302 to mcp-remote's own
// localhost callback. Then mcp-remote lists tools. A second run reuses the stored tokens (no browser).
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, type SpawnedServer } from '../helpers/server.js';
import { makeWorkspace, type TempWorkspace } from '../helpers/workspace.js';
import { PASSWORD, runToEnd, startOAuthBin } from './oauth-helpers.js';
import { cachedPath, missingReason } from '../helpers/cached-tools.js';

const BRIDGE = cachedPath('mcp-remote');
const bridgeMissing = missingReason('mcp-remote');
const CI = process.env.CI === 'true' || process.env.CI === '1';
if (bridgeMissing) console.warn(`[oauth-mcp-remote] skipped: ${bridgeMissing}`);

describe('mcp-remote for the bridge test', () => {
  it('is present (required under CI=true)', () => {
    if (bridgeMissing && CI) expect.fail(`CI=true but ${bridgeMissing}`);
  });
});

let ws: TempWorkspace;
let server: SpawnedServer;
let home: string;

// The "browser": GET the page, POST the password, GET the callback it is redirected to. Logs each step.
const BROWSER_SCRIPT = `#!${process.execPath}
import { appendFileSync } from 'node:fs';
const log = (line) => appendFileSync(process.env.OAUTH_BROWSER_LOG, line + '\\n');
const url = process.argv[2];
log('open ' + url);
const page = await fetch(url, { redirect: 'manual' });
const html = await page.text();
log('page ' + page.status + ' ' + (html.includes('MCP CLI Client') ? 'shows-client-name' : 'no-client-name'));
const handle = /name="request" value="([^"]+)"/.exec(html)?.[1];
const post = await fetch(url, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams({ request: handle ?? '', password: process.env.OAUTH_BROWSER_PASSWORD, action: 'approve' }).toString() });
const location = post.headers.get('location');
log('submit ' + post.status + ' ' + location);
// mcp-remote starts its callback listener lazily, after it has asked for the browser (a person takes
// seconds to type the password; this script takes milliseconds): retry for up to 60 s (a busy machine).
for (let i = 0; ; i++) {
  try {
    const cb = await fetch(location);
    log('callback ' + cb.status);
    break;
  } catch (e) {
    if (i >= 300) {
      log('callback failed ' + (e.cause?.message ?? e.message));
      process.exit(1);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}
`;

function runBridge(
  args: string[],
  env: Record<string, string>,
  timeoutMs = 90_000,
): Promise<{ code: number | null; out: string }> {
  // stdin stays open: mcp-remote shuts down when its stdin ends (it is a stdio bridge).
  return runToEnd(process.execPath, [BRIDGE, ...args], { env, ceilingMs: timeoutMs, stdin: 'pipe' });
}

beforeAll(async () => {
  ws = makeWorkspace({ 'README.md': '# demo\n' });
  home = mkdtempSync(path.join(tmpdir(), 'wb-mcp-remote-'));
  server = await startOAuthBin(ws.dir);
});
afterAll(async () => {
  await server?.stop();
  ws?.cleanup();
  if (home) rmSync(home, { recursive: true, force: true });
});

describe.skipIf(Boolean(bridgeMissing))(
  'mcp-remote-client with a BROWSER script (docs/oauth.md#tested-with)',
  () => {
    it('registers, authorizes through the password form, lists tools; a second run reuses the tokens', async () => {
      const browser = path.join(home, 'browser.mjs');
      const browserLog = path.join(home, 'browser.log');
      writeFileSync(browser, BROWSER_SCRIPT);
      chmodSync(browser, 0o755);
      writeFileSync(browserLog, '');
      const env = {
        PATH: process.env.PATH ?? '',
        HOME: home,
        BROWSER: browser,
        OAUTH_BROWSER_LOG: browserLog,
        OAUTH_BROWSER_PASSWORD: PASSWORD,
        // No desktop: xdg-open falls back to $BROWSER.
        DISPLAY: '',
        WAYLAND_DISPLAY: '',
      };
      const port = await freePort();
      const first = await runBridge([server.url, String(port), '--transport', 'http-only'], env);
      const steps = readFileSync(browserLog, 'utf8');
      expect(steps, first.out).toMatch(/^open http:\/\/127\.0\.0\.1:\d+\/oauth\/authorize\?/m);
      expect(steps).toContain('page 200 shows-client-name');
      expect(steps).toMatch(
        new RegExp(`submit 302 http://localhost:${port}/oauth/callback\\?code=[^\\s]+&state=[^\\s]+&iss=`),
      );
      expect(steps).toContain('callback 200');
      const authorizeUrl = new URL(/^open (\S+)$/m.exec(steps)?.[1] as string);
      expect(authorizeUrl.searchParams.get('resource')).toBe(server.url);
      expect(authorizeUrl.searchParams.get('code_challenge_method')).toBe('S256');
      expect(first.out).toContain('Connected successfully!');
      expect(first.out).toContain('"read_file"');
      expect(first.code, first.out).toBe(0);

      const second = await runBridge([server.url, String(port), '--transport', 'http-only'], env);
      expect(second.out).toContain('"read_file"');
      expect(second.code, second.out).toBe(0);
      expect(readFileSync(browserLog, 'utf8')).toBe(steps); // no second trip through the browser
    }, 240_000);
  },
);
