// The operator's console in headless Chromium (docs/console.md): opened from the banner's one-time link (a
// reused link is refused), a handshake-era client's `rm -rf build` in `safe` waits until the test clicks
// Approve and then returns its output, Deny answers PERMISSION_DENIED with the note, Kill stops a running
// command, an apply_patch shows as a diff and Revert restores the file, and every request the page makes stays
// on the console's own origin. axe-core finds no serious or critical violation at phone and desktop size.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callTool } from '../helpers/rpc.js';
import { REPO_ROOT, type SpawnedServer } from '../helpers/server.js';
import { makeWorkspace, type TempWorkspace } from '../helpers/workspace.js';
import { missingReason } from '../helpers/cached-tools.js';
import {
  CHROMIUM,
  consoleLink,
  openConsole,
  requireOrSkip,
  seriousAxeViolations,
  type OpenConsole,
} from './support.js';

const missing = requireOrSkip(
  'the console browser test',
  !existsSync(CHROMIUM)
    ? `${CHROMIUM} not found (Debian: apt-get install -y chromium)`
    : (missingReason('playwright-core') ?? missingReason('axe-core')),
);

describe.skipIf(missing !== undefined)('the operator console in Chromium', () => {
  let ws: TempWorkspace;
  let logDir: string;
  let opened: OpenConsole | undefined;
  let srv: SpawnedServer;
  let origin: string;
  let page: any; // eslint-disable-line @typescript-eslint/no-explicit-any
  const requests: string[] = [];

  beforeAll(async () => {
    ws = makeWorkspace({
      'src/app.txt': 'one\ntwo\nthree\n',
      'build/out.txt': 'x\n',
      'build2/out.txt': 'y\n',
    });
    opened = await openConsole(ws.dir, requests);
    ({ srv, logDir, origin, page } = opened);
  }, 120_000);

  afterAll(async () => {
    await opened?.close();
    ws?.cleanup();
  });

  it('opens from the banner link; the same link a second time is refused', async () => {
    expect(await page.title()).toBe('workbench-mcp console');
    const again = await fetch(consoleLink(srv.stderr()), { redirect: 'manual' });
    expect(again.status).toBe(403);
    expect(await again.text()).toContain('workbench-mcp console');
  });

  it('a handshake-era client waits for Approve, then gets the output of its rm -rf', async () => {
    const call = callTool(srv.url, 'exec_command', {
      cmd: 'rm -rf build && echo removed',
      yield_time_ms: 30_000,
    });
    const card = page.locator('[data-approval]', { hasText: 'rm -rf build' });
    await card.waitFor({ timeout: 30_000 });
    await card.getByRole('button', { name: 'Approve once' }).click();
    const r = await call;
    expect(r.isError).toBe(false);
    expect(r.structuredContent).toMatchObject({ status: 'exited', exit_code: 0 });
    expect(r.structuredContent.stdout).toContain('removed');
    expect(existsSync(path.join(ws.dir, 'build'))).toBe(false);
  });

  it('Deny answers PERMISSION_DENIED with the operator note, and nothing runs', async () => {
    const call = callTool(srv.url, 'exec_command', { cmd: 'rm -rf build2', yield_time_ms: 30_000 });
    const card = page.locator('[data-approval]', { hasText: 'rm -rf build2' });
    await card.waitFor({ timeout: 30_000 });
    await card.getByLabel('Note').fill('keep build2');
    await card.getByRole('button', { name: 'Deny' }).click();
    const r = await call;
    expect(r.isError).toBe(true);
    expect(r.structuredContent.error.code).toBe('PERMISSION_DENIED');
    expect(r.structuredContent.error.details.note).toBe('keep build2');
    expect(existsSync(path.join(ws.dir, 'build2/out.txt'))).toBe(true);
  });

  it('Kill stops a running command', async () => {
    const r = await callTool(srv.url, 'exec_command', { cmd: 'echo started; sleep 600', yield_time_ms: 500 });
    const id = r.structuredContent.command_id as string;
    expect(r.structuredContent.status).toBe('running');
    const card = page.locator(`[data-command="${id}"]`);
    await card.getByRole('button', { name: `Kill command ${id}` }).click();
    await card.getByText('Stopped.').waitFor({ timeout: 30_000 });
    const after = await callTool(srv.url, 'write_stdin', { command_id: id, chars: '', yield_time_ms: 0 });
    expect(after.structuredContent.status).not.toBe('running');
  });

  it('an apply_patch shows as a diff, and Revert restores the file, its answer shown even after the card is drawn again', async () => {
    const patch =
      '*** Begin Patch\n*** Update File: src/app.txt\n@@\n one\n-two\n+TWO\n three\n*** End Patch\n';
    const r = await callTool(srv.url, 'apply_patch', { patch });
    expect(r.isError).toBe(false);
    expect(readFileSync(path.join(ws.dir, 'src/app.txt'), 'utf8')).toBe('one\nTWO\nthree\n');
    const first = page.locator('[data-edit]', { hasText: 'src/app.txt' }).first();
    await first.locator('.diff .del', { hasText: '-two' }).waitFor({ timeout: 30_000 });
    // This edit's card by its id: the revert is an edit of its own, listed above it once the list is drawn again.
    const card = page.locator(`[data-edit="${await first.getAttribute('data-edit')}"]`);
    await card.locator('.diff .add', { hasText: '+TWO' }).waitFor();
    await card.getByRole('button', { name: /Revert edit/ }).click();
    // The list is drawn again (the card now says who reverted it) a moment after the answer or, on a busy
    // machine, before it: either way the answer stays in the card on the page.
    await card.getByText(/^Reverted \(/).waitFor({ timeout: 30_000 });
    await card.getByText('Reverted.', { exact: true }).waitFor({ timeout: 30_000 });
    expect(readFileSync(path.join(ws.dir, 'src/app.txt'), 'utf8')).toBe('one\ntwo\nthree\n');
    const audit = readFileSync(path.join(logDir, 'audit.jsonl'), 'utf8');
    expect(audit).toMatch(/"who":"operator:console","tool":"revert_edit"/);
  });

  it('every request the page made went to its own origin (it works without a network)', () => {
    expect(requests.length).toBeGreaterThan(2);
    for (const u of requests) expect(new URL(u).origin, u).toBe(origin);
  });

  it('axe-core: no serious or critical violation at 390 px and 1280 px', async () => {
    // A request waiting, so its card (inputs, buttons) is checked too and shows in the screenshots.
    const waiting = callTool(srv.url, 'exec_command', { cmd: 'rm -rf build2/cache', yield_time_ms: 30_000 });
    const card = page.locator('[data-approval]', { hasText: 'rm -rf build2/cache' });
    await card.waitFor({ timeout: 30_000 });
    for (const width of [390, 1280]) {
      expect(await seriousAxeViolations(page, width), `width ${width}`).toEqual([]);
    }
    if (process.env.WB_CONSOLE_SCREENSHOTS === '1') {
      const dir = path.join(REPO_ROOT, 'docs/images');
      mkdirSync(dir, { recursive: true });
      for (const [w, h, name] of [
        [1280, 900, 'console-desktop'],
        [390, 844, 'console-phone'],
      ] as const) {
        await page.setViewportSize({ width: w, height: h });
        await page.evaluate('window.scrollTo(0, 0)');
        await page.screenshot({ path: path.join(dir, `${name}.png`), fullPage: false });
      }
      await page.setViewportSize({ width: 1280, height: 900 });
      writeFileSync(
        path.join(dir, '.generated-by'),
        'Made by `WB_CONSOLE_SCREENSHOTS=1 npx vitest run test/console/console-browser.test.ts`.\n',
      );
    }
    await card.getByRole('button', { name: 'Deny' }).click();
    expect((await waiting).structuredContent.error.code).toBe('PERMISSION_DENIED');
  });
});
