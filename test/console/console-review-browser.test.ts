// The console's Edits view grouped by review point (docs/console.md#edits), in headless Chromium: the points
// show_changes made, newest first, each with its file list, its diff when opened and its edits; the edits after
// the newest point under "Not reviewed yet"; "Revert to this review point" refused with PATCH_CONFLICT while
// there is unreviewed work on a file it would write, then restoring the point, audited as the operator; every
// request on the console's own origin; axe-core finds no serious or critical violation at 390 and 1280 px.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callTool } from '../helpers/rpc.js';
import type { SpawnedServer } from '../helpers/server.js';
import { git, makeWorkspace, type TempWorkspace } from '../helpers/workspace.js';
import { missingReason } from '../helpers/cached-tools.js';
import { CHROMIUM, openConsole, requireOrSkip, seriousAxeViolations, type OpenConsole } from './support.js';

const missing = requireOrSkip(
  'the console review points browser test',
  !existsSync(CHROMIUM)
    ? `${CHROMIUM} not found (Debian: apt-get install -y chromium)`
    : (missingReason('playwright-core') ?? missingReason('axe-core')),
);

const patchOf = (file: string, from: string, to: string) =>
  `*** Begin Patch\n*** Update File: ${file}\n@@\n-${from}\n+${to}\n*** End Patch\n`;

describe.skipIf(missing !== undefined)('the console groups edits by review point', () => {
  let ws: TempWorkspace;
  let logDir: string;
  let opened: OpenConsole | undefined;
  let srv: SpawnedServer;
  let origin: string;
  let page: any; // eslint-disable-line @typescript-eslint/no-explicit-any
  const requests: string[] = [];
  const points: string[] = [];

  const show = async () => {
    const r = await callTool(srv.url, 'show_changes', {});
    expect(r.isError, r.content[0]?.text).toBe(false);
    points.push(r.structuredContent.point);
    return r.structuredContent;
  };
  const patch = async (file: string, from: string, to: string) =>
    expect((await callTool(srv.url, 'apply_patch', { patch: patchOf(file, from, to) })).isError).toBe(false);

  beforeAll(async () => {
    ws = makeWorkspace({ 'a.txt': 'alpha\n', 'b.txt': 'beta\n' }, { git: true });
    git(ws.dir, 'add', '-A');
    git(ws.dir, 'commit', '-q', '-m', 'base');
    opened = await openConsole(ws.dir, requests);
    ({ srv, logDir, origin, page } = opened);
  }, 120_000);

  afterAll(async () => {
    await opened?.close();
    ws?.cleanup();
  });

  it('shows each point newest first with its files, its diff when opened, and its edits', async () => {
    await show(); // r1: HEAD, nothing changed
    await patch('a.txt', 'alpha', 'ALPHA');
    await show(); // r2: a.txt
    await patch('b.txt', 'beta', 'BETA'); // not reviewed yet
    const groups = page.locator('#edit-list > li.group');
    await page.locator(`[data-point="${points[1]}"]`).waitFor({ timeout: 30_000 });
    await page
      .locator('[data-group="unreviewed"] [data-edit]', { hasText: 'b.txt' })
      .waitFor({ timeout: 30_000 });
    const order = await groups.evaluateAll((els: Array<{ getAttribute(n: string): string | null }>) =>
      els.map((e) => e.getAttribute('data-point') ?? e.getAttribute('data-group')),
    );
    expect(order).toEqual(['unreviewed', points[1], points[0]]);
    const p2 = page.locator(`[data-point="${points[1]}"]`);
    await p2.locator('.files', { hasText: 'a.txt' }).waitFor();
    await p2.locator('[data-edit]', { hasText: 'a.txt' }).waitFor();
    await p2.getByText(`Diff of ${points[1]}`).click();
    // The point's own diff (a child of its entry), loaded when opened; the edit card below it shows the same
    // lines in a diff of its own, which a locator over the whole entry would find first.
    const own = p2.locator(':scope > details .diff');
    await own.locator('.del', { hasText: '-alpha' }).waitFor({ timeout: 30_000 });
    await own.locator('.add', { hasText: '+ALPHA' }).waitFor();
  });

  it('Revert to this review point refuses unreviewed work, then restores the point', async () => {
    const p1 = page.locator(`[data-point="${points[0]}"]`);
    await p1.getByRole('button', { name: `Revert to review point ${points[0]}` }).click();
    await p1.getByText(/b\.txt/).waitFor({ timeout: 30_000 });
    expect(await p1.locator('.message').textContent()).toContain('nobody has reviewed');
    expect(readFileSync(path.join(ws.dir, 'a.txt'), 'utf8')).toBe('ALPHA\n');
    await show(); // r3 reviews b.txt
    const p1again = page.locator(`[data-point="${points[0]}"]`);
    await p1again.getByRole('button', { name: `Revert to review point ${points[0]}` }).click();
    await p1again.getByText(`Reverted to ${points[0]}.`).waitFor({ timeout: 30_000 });
    expect(readFileSync(path.join(ws.dir, 'a.txt'), 'utf8')).toBe('alpha\n');
    expect(readFileSync(path.join(ws.dir, 'b.txt'), 'utf8')).toBe('beta\n');
    // The revert is an edit of its own (by the operator), not yet reviewed, and an audit line.
    await page
      .locator('[data-group="unreviewed"] [data-edit]', { hasText: 'revert_changes' })
      .waitFor({ timeout: 30_000 });
    const audit = readFileSync(path.join(logDir, 'audit.jsonl'), 'utf8');
    expect(audit).toMatch(/"who":"operator:console","tool":"revert_changes"/);
  });

  it('every request the page made went to its own origin', () => {
    expect(requests.some((u) => u.includes('/api/points/'))).toBe(true);
    for (const u of requests) expect(new URL(u).origin, u).toBe(origin);
  });

  it('axe-core: no serious or critical violation at 390 px and 1280 px', async () => {
    for (const width of [390, 1280]) {
      expect(await seriousAxeViolations(page, width), `width ${width}`).toEqual([]);
    }
  });
});
