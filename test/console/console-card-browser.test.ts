// What the operator approves is what runs (docs/console.md#what-you-see-is-what-runs), in headless Chromium
// against the built server: a `safe` command padded with 3,000 spaces, one whose dangerous part is 60 newlines
// down, one longer than the card shows, and `true \u2067; rm -rf data #\u2069` each show the part that would run
// (or a count of what is hidden) inside the card's visible box, in order; "Approve once" runs exactly that
// command. U+202E in a file name, a command, its output and a model's reason reaches the page only as an escape,
// and the page's own text after it keeps its order; the model's reason shows with the next request only. A
// sign-in whose client_name is `Claude Code → claude.ai` and 40 newlines shows its real redirect host in its own
// field on the console and on the authorization and pairing pages, the name on one line with the newlines
// escaped; a U+202E name leaves the authorization page's own sentence in order.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callTool } from '../helpers/rpc.js';
import { startServer, type SpawnedServer } from '../helpers/server.js';
import { makeWorkspace, type TempWorkspace } from '../helpers/workspace.js';
import { importCached, missingReason, type Playwright } from '../helpers/cached-tools.js';
import { authorizeUrl, CALLBACK, pkce, register, startOAuthBin } from '../e2e/oauth-helpers.js';
import { CHROMIUM, CHROMIUM_ARGS, consoleLink, requireOrSkip } from './support.js';

type Any = any; // eslint-disable-line @typescript-eslint/no-explicit-any

const missing = requireOrSkip(
  'the approval card browser test',
  !existsSync(CHROMIUM)
    ? `${CHROMIUM} not found (Debian: apt-get install -y chromium)`
    : missingReason('playwright-core'),
);

/**
 * Where `phrase` is drawn inside `root`: its box, and whether that box lies inside every ancestor that clips
 * (a scrolled-away or cut-off phrase is not shown). Undefined when no text node holds the phrase.
 */
function findPhrase(root: Any, phrase: string): { left: number; inView: boolean } | undefined {
  const g = globalThis as Any;
  const walker = g.document.createTreeWalker(root, 4 /* NodeFilter.SHOW_TEXT */);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const i = n.data.indexOf(phrase);
    if (i < 0) continue;
    const range = g.document.createRange();
    range.setStart(n, i);
    range.setEnd(n, i + phrase.length);
    const box = range.getBoundingClientRect();
    let inView = box.width > 0 && box.height > 0;
    for (let el = n.parentElement; el && inView; el = el.parentElement) {
      const cs = g.getComputedStyle(el);
      if (cs.overflowX === 'visible' && cs.overflowY === 'visible') continue;
      const c = el.getBoundingClientRect();
      inView =
        box.top >= c.top - 1 &&
        box.bottom <= c.bottom + 1 &&
        box.left >= c.left - 1 &&
        box.right <= c.right + 1;
    }
    return { left: box.left, inView };
  }
  return undefined;
}

async function phrase(loc: Any, text: string): Promise<{ left: number; inView: boolean } | undefined> {
  return loc.evaluate(findPhrase, text);
}

describe.skipIf(missing !== undefined)('approval cards and sign-in pages show what runs, in Chromium', () => {
  let ws: TempWorkspace;
  let srv: SpawnedServer;
  let oauth: SpawnedServer;
  let oauthWs: TempWorkspace;
  let browser: Any;
  let page: Any;

  async function openConsole(server: SpawnedServer): Promise<Any> {
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const p = await ctx.newPage();
    await p.goto(consoleLink(server.stderr()));
    await p.waitForSelector('body[data-ready="yes"]', { timeout: 30_000 });
    return p;
  }

  beforeAll(async () => {
    ws = makeWorkspace({ 'keep.txt': 'k\n' });
    oauthWs = makeWorkspace({ 'a.txt': 'a\n' });
    [srv, oauth] = await Promise.all([startServer({ workspace: ws.dir }), startOAuthBin(oauthWs.dir)]);
    const { chromium } = await importCached<Playwright>('playwright-core');
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, timeout: 60_000 });
    page = await openConsole(srv);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await Promise.all([srv?.stop(), oauth?.stop()]);
    ws?.cleanup();
    oauthWs?.cleanup();
  });

  /** A directory the command under test would delete. */
  function plant(name: string): string {
    mkdirSync(path.join(ws.dir, name), { recursive: true });
    writeFileSync(path.join(ws.dir, name, 'f'), 'x\n');
    return path.join(ws.dir, name);
  }

  /** The card of the request waiting whose text has `marker`, once it shows. */
  async function waitingCard(marker: string): Promise<Any> {
    const card = page.locator('[data-approval]', { hasText: marker });
    await card.waitFor({ timeout: 30_000 });
    return card;
  }

  async function decide(card: Any, button: 'Approve once' | 'Deny'): Promise<void> {
    await card.getByRole('button', { name: button }).click();
    await card.waitFor({ state: 'detached', timeout: 30_000 });
  }

  it('3,000 spaces before `; rm -rf ./data`: the card shows the tail; Approve once runs exactly that line', async () => {
    const data = plant('data');
    const cmd = `ls -la${' '.repeat(3000)}; rm -rf ./data`;
    const call = callTool(srv.url, 'exec_command', { cmd, yield_time_ms: 30_000 });
    const card = await waitingCard('ls -la');
    expect(await card.innerText()).toContain('rm -rf ./data');
    expect(await phrase(card, '; rm -rf ./data')).toMatchObject({ inView: true });
    expect(await card.innerText()).toContain('3,021 characters');
    await decide(card, 'Approve once');
    const r = await call;
    expect(r.structuredContent).toMatchObject({ status: 'exited', exit_code: 0 });
    expect(r.structuredContent.stdout).toContain('keep.txt');
    expect(existsSync(data)).toBe(false);
  });

  it('the dangerous part 60 newlines down is inside the card, not scrolled away', async () => {
    plant('data-b');
    const call = callTool(srv.url, 'exec_command', {
      cmd: `ls${'\n'.repeat(60)}rm -rf ./data-b`,
      yield_time_ms: 30_000,
    });
    const card = await waitingCard('data-b');
    expect(await phrase(card, 'rm -rf ./data-b')).toMatchObject({ inView: true });
    expect(await card.innerText()).toContain('⏎ ×60');
    await decide(card, 'Deny');
    expect((await call).structuredContent.error.code).toBe('PERMISSION_DENIED');
  });

  it('a command longer than the card shows: its start, its end, and how many characters are hidden', async () => {
    const call = callTool(srv.url, 'exec_command', {
      cmd: `echo ${'a'.repeat(5000)}; rm -rf ./data2`,
      yield_time_ms: 30_000,
    });
    const card = await waitingCard('echo aaa');
    const text = await card.innerText();
    expect(text).toMatch(/2,021 characters hidden \(5,021 in all\)/);
    expect(await phrase(card, '; rm -rf ./data2')).toMatchObject({ inView: true });
    await decide(card, 'Deny');
    expect((await call).structuredContent.error.code).toBe('PERMISSION_DENIED');
  });

  it('`true \\u2067; rm -rf data #\\u2069` is shown escaped and in order, and approving runs it', async () => {
    const data = plant('data');
    const call = callTool(srv.url, 'exec_command', {
      cmd: 'true \u2067; rm -rf data #\u2069',
      yield_time_ms: 30_000,
    });
    const card = await waitingCard('true');
    const text = await card.innerText();
    expect(text).toContain('\\u2067');
    expect(text).toContain('\\u2069');
    expect(text).not.toMatch(/[\u2067\u2069]/);
    expect(await card.locator('.esc', { hasText: '\\u2067' }).count()).toBe(1);
    // Drawn left to right as it runs: the `#` after the rm, not before it as if the rm were commented out.
    const subject = card.locator('pre');
    const rm = await phrase(subject, 'rm -rf data');
    const hash = await phrase(subject, '#');
    expect(rm?.inView).toBe(true);
    expect(hash?.left).toBeGreaterThan(rm?.left as number);
    await decide(card, 'Approve once');
    expect((await call).structuredContent).toMatchObject({ status: 'exited', exit_code: 0 });
    expect(existsSync(data)).toBe(false);
  });

  it('U+202E in a file name, a command and its output reaches the page only as an escape, in order', async () => {
    const patch =
      '*** Begin Patch\n*** Add File: dir/\u202Etxt.exe\n+x\n*** Add File: zzz-after.txt\n+y\n*** End Patch\n';
    expect((await callTool(srv.url, 'apply_patch', { patch })).isError).toBe(false);
    const r = await callTool(srv.url, 'exec_command', { cmd: 'printf "out \\342\\200\\256tuo-ot\\n"' });
    expect(r.structuredContent.stdout).toContain('\u202E');
    const edit = page.locator('[data-edit]', { hasText: 'zzz-after.txt' });
    await edit.waitFor({ timeout: 30_000 });
    expect(await edit.innerText()).toContain('dir/\\u202Etxt.exe');
    // The page's own text after the name (", A zzz-after.txt") is not pulled into reverse.
    const name = await phrase(edit.locator('div.mono'), 'txt.exe');
    const after = await phrase(edit.locator('div.mono'), 'zzz-after.txt');
    expect(after?.left).toBeGreaterThan(name?.left as number);
    const command = page.locator(`[data-command="${r.structuredContent.command_id}"]`);
    await command.waitFor({ timeout: 30_000 });
    await command.locator('summary').click();
    expect(await command.innerText()).toContain('out \\u202Etuo-ot');
    expect(await page.locator('body').innerText()).not.toContain('\u202E');
  });

  it("a model's reason with U+202E is escaped, and rides with the next request of its kind only", async () => {
    const reason = await callTool(srv.url, 'request_permissions', {
      tool_name: 'exec_command',
      permission: 'destructive',
      reason: 'clean up \u202Eatad/. fr- mr',
    });
    expect(reason.structuredContent).toMatchObject({ ask_on_call: true });
    plant('data3');
    const first = callTool(srv.url, 'exec_command', { cmd: 'rm -rf data3', yield_time_ms: 30_000 });
    const card = await waitingCard('rm -rf data3');
    const text = await card.innerText();
    expect(text).toContain('The model says');
    expect(text).toContain('clean up \\u202Eatad/. fr- mr');
    expect(text).not.toContain('\u202E');
    await decide(card, 'Deny');
    await first;
    const second = callTool(srv.url, 'exec_command', { cmd: 'rm -rf data3/f', yield_time_ms: 30_000 });
    const next = await waitingCard('data3/f');
    expect(await next.innerText()).not.toContain('The model says');
    await decide(next, 'Deny');
    expect((await second).structuredContent.error.code).toBe('PERMISSION_DENIED');
  });

  /** An authorization page of a newly registered client with this name, in a page of its own. */
  async function authorizePage(clientName: string): Promise<Any> {
    const reg = await register(oauth.base, { redirect_uris: [CALLBACK], client_name: clientName });
    expect(reg.status).toBe(201);
    const p = pkce();
    const ctx = await browser.newContext({ viewport: { width: 800, height: 700 } });
    const tab = await ctx.newPage();
    const url = authorizeUrl(oauth.base, {
      response_type: 'code',
      client_id: reg.json.client_id,
      redirect_uri: CALLBACK,
      code_challenge: p.challenge,
      code_challenge_method: 'S256',
      state: 'st',
      resource: `${oauth.base}/mcp`,
    });
    expect((await tab.goto(url)).status()).toBe(200);
    return tab;
  }

  /** The labelled fields of a sign-in page, and whether the name is drawn on one line. */
  async function signInFields(tab: Any) {
    const field = (label: string) =>
      tab.locator('dt', { hasText: label }).locator('xpath=following-sibling::dd[1]');
    const who = tab.locator('.who').first();
    const lineHeight = await who.evaluate((el: Any) =>
      parseFloat((globalThis as Any).getComputedStyle(el).lineHeight),
    );
    const box = await who.boundingBox();
    return {
      host: (await field('Redirect host').innerText()) as string,
      name: (await field('Application').innerText()) as string,
      oneLine: box.height < lineHeight * 1.5,
    };
  }

  it('a sign-in named `Claude Code → claude.ai` + 40 newlines: the real redirect host in its own field, everywhere', async () => {
    const host = new URL(CALLBACK).host;
    const tab = await authorizePage(`Claude Code → claude.ai${'\n'.repeat(40)}.`);
    const onPage = await signInFields(tab);
    expect(onPage).toMatchObject({ host, oneLine: true });
    expect(onPage.name).toBe('Claude Code → claude.ai\\n ×40.');
    await tab.getByRole('button', { name: 'Approve from the console' }).click();
    await tab.locator('.code').waitFor();
    expect(await signInFields(tab)).toMatchObject({ host, oneLine: true });

    const con = await openConsole(oauth);
    const card = con.locator('[data-approval]');
    await card.waitFor({ timeout: 30_000 });
    const dd = card.locator('dt', { hasText: 'Redirect host' }).locator('xpath=following-sibling::dd[1]');
    expect(await dd.innerText()).toBe(host);
    expect(await phrase(dd, host)).toMatchObject({ inView: true });
    const name = card.locator('dt', { hasText: 'Application' }).locator('xpath=following-sibling::dd[1]');
    expect(await name.innerText()).toBe('Claude Code → claude.ai\\n ×40.');
    await card.getByRole('button', { name: 'Deny' }).click();
    await card.waitFor({ state: 'detached', timeout: 30_000 });
    await tab.context().close();
    await con.context().close();
  });

  it('a U+202E client name is escaped on the authorization page, whose own sentence keeps its order', async () => {
    const tab = await authorizePage('Evil \u202EppA');
    expect(await tab.locator('.who').first().innerText()).toBe('Evil \\u202EppA');
    const body = tab.locator('main');
    expect(await body.innerText()).not.toContain('\u202E');
    // Two words of one line of the page's own sentence, drawn left to right.
    const wants = await phrase(body, 'wants');
    const connect = await phrase(body, 'connect');
    expect(connect?.left).toBeGreaterThan(wants?.left as number);
    await tab.context().close();
  });
});
