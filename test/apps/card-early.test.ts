// The card's early handshake (docs/review-card.md#the-start), in headless Chromium inside the host page built on
// the official host bridge (test/apps/card-host.js), fed a real result of the spawned bin: early.js asks the host
// `ui/initialize` before the bridge's script runs, and the App's transport (early-transport.js) takes the answer
// over. The host hears one `ui/initialize` and one `initialized` (the App's own params, so a change of the
// bridge's shows here); a host that drops the early request, refuses it or answers it after the App's own still
// gets the card drawn through the App's own handshake; a malformed tool result the host sends while the bridge
// is still starting is refused by the bridge's checks, as any message is, and a theme change sent then holds.
// Nothing is logged as an error.
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { missingReason } from '../helpers/cached-tools.js';
import { CHROMIUM } from '../helpers/chromium.js';
import { requireOrSkip } from '../console/support.js';
import { CARD_DIFF as DIFF, openHost, startCardRig, type CardRig } from './card-host-server.js';

type Any = any; // eslint-disable-line @typescript-eslint/no-explicit-any

const missing = requireOrSkip(
  'the review card early-handshake test',
  !existsSync(CHROMIUM)
    ? `${CHROMIUM} not found (Debian: apt-get install -y chromium)`
    : missingReason('playwright-core'),
);

const HANDSHAKE = ['ui/initialize', 'ui/notifications/initialized'];
const KINDS = ['string', 'number'];

describe.skipIf(missing !== undefined)('the review card starts its handshake early', () => {
  let rig: CardRig | undefined;
  let client: Any;
  let browser: Any;
  let page: Any;
  let html: string;
  let result: Any;
  const errors: string[] = [];
  const card = () => page.frameLocator('iframe');
  /** What the card sent the host of the handshake, in order, each request followed by its id's type. */
  const handshake = async (): Promise<string[]> =>
    (await page.evaluate(() => (globalThis as Any).hostSeen)).filter(
      (m: string, i: number, all: string[]) =>
        HANDSHAKE.includes(m) || (KINDS.includes(m) && all[i - 1] === 'ui/initialize'),
    );

  async function show(
    r: unknown,
    opts: { early?: string; raw?: boolean; change?: object } = {},
  ): Promise<void> {
    await page.evaluate(
      ([h, res, o]: [string, unknown, object]) => (globalThis as Any).showCard(h, res, 'light', o),
      [html, r, opts],
    );
  }

  beforeAll(async () => {
    rig = await startCardRig({ 'a.txt': 'one\n' }, 'card-early-test');
    ({ client, html } = rig);
    const patch = [
      '*** Begin Patch',
      '*** Add File: b.txt',
      '+two',
      '*** Update File: a.txt',
      '@@',
      '-one',
      '+1',
    ];
    result = await client.callTool({
      name: 'apply_patch',
      arguments: { patch: [...patch, '*** End Patch'].join('\n') },
    });
    expect(result.isError, JSON.stringify(result.content)).toBe(false);
    expect(result._meta[DIFF].files).toHaveLength(2);
    ({ browser, page } = await openHost(rig.host.url, errors));
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await rig?.close();
  });

  it('the host hears one ui/initialize and one initialized, and the card draws the result', async () => {
    await show(result);
    await expect(card().locator('h1').innerText()).resolves.toMatch(/^2 files changed\s+\+2\s+−1$/);
    // The early request (a string id), and no second one from the App (a number).
    expect(await handshake()).toEqual(['ui/initialize', 'string', 'ui/notifications/initialized']);
  });

  for (const early of ['drop', 'refuse', 'late'])
    it(`a host that does not answer the early request (${early}): the App's own handshake`, async () => {
      await show(result, { early });
      await expect(card().locator('h1').innerText()).resolves.toMatch(/^2 files changed/);
      expect(await handshake()).toEqual([
        'ui/initialize',
        'string',
        'ui/initialize',
        'number',
        'ui/notifications/initialized',
      ]);
    });

  it('a malformed tool result sent while the bridge starts is refused by its checks; a good one is drawn', async () => {
    // Its diff is whole, its content is not a list: unchecked, the card would draw the diff.
    await show({ ...result, content: 'not a list' }, { raw: true });
    // The host's next message is handled after the malformed one: once the theme changed, it was refused.
    await page.evaluate(() => (globalThis as Any).setTheme('dark'));
    await expect.poll(() => card().locator('html').getAttribute('data-theme')).toBe('dark');
    expect(await card().locator('main').innerText()).toBe("Waiting for the tool's result…");
    expect(await card().locator('ul.files').count()).toBe(0);
    await page.evaluate((r: unknown) => (globalThis as Any).sendToolResult(r), result);
    await expect(card().locator('h1').innerText()).resolves.toMatch(/^2 files changed/);
    // The theme the host changed to while the bridge was starting holds: the App read the change after the
    // host context of its handshake, as it does when the host sends it after `initialized`.
    expect(await card().locator('html').getAttribute('data-theme')).toBe('dark');
  });

  it('a theme change the host sends after the result, while the bridge starts, holds over the handshake', async () => {
    // Sent at once after `initialized`, so it waits with the result while the bundle runs: the App must read it
    // after the host context of its handshake (light), as it would have had the host sent it later.
    await show(result, { change: { theme: 'dark' } });
    await expect(card().locator('h1').innerText()).resolves.toMatch(/^2 files changed/);
    expect(await card().locator('html').getAttribute('data-theme')).toBe('dark');
  });

  it('logged no error in the card or the host', () => {
    expect(errors).toEqual([]);
  });
});
