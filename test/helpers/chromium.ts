// Debian's Chromium for the browser tests (driven by playwright-core from node_modules/.cache): where it is and
// the flags every test launches it with. Without the background-networking flags Chromium keeps trying to reach
// the internet. seriousAxeViolations runs the accessibility check the browser tests share.
import { readFileSync } from 'node:fs';
import { cachedPath } from './cached-tools.js';

export const CHROMIUM = process.env.WB_CHROMIUM ?? '/usr/bin/chromium';
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

/** One axe-core finding: its rule, how bad, and the elements it names. */
export interface AxeViolation {
  id: string;
  impact: string;
  nodes: string[];
}

/**
 * axe-core (installed for tests, test/helpers/cached-tools.ts) run on `target` (the page, or a frame of it)
 * with the page `width` px wide and 900 high: the serious and critical violations, [] when there are none.
 */
export async function seriousAxeViolations(
  page: any, // eslint-disable-line @typescript-eslint/no-explicit-any
  width: number,
  target: any = page, // eslint-disable-line @typescript-eslint/no-explicit-any
): Promise<AxeViolation[]> {
  await page.setViewportSize({ width, height: 900 });
  await target.evaluate(readFileSync(cachedPath('axe-core'), 'utf8'));
  const found: AxeViolation[] = await target.evaluate(async () => {
    /* eslint-disable @typescript-eslint/no-explicit-any -- axe's result, in the page */
    const g = globalThis as any;
    const r = await g.axe.run(g.document);
    return r.violations.map((v: any) => ({
      id: v.id,
      impact: v.impact,
      nodes: v.nodes.map((n: any) => String(n.target)),
    }));
    /* eslint-enable @typescript-eslint/no-explicit-any */
  });
  return found.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}
