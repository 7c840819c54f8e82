// What the console tests share: the banner's one-time link, Chromium's path and flags and the axe-core check
// (test/helpers/chromium.ts), and the rule for a missing component (skip with a reason on a laptop, fail under CI=true).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { importCached, type Playwright } from '../helpers/cached-tools.js';
import { CHROMIUM, CHROMIUM_ARGS, seriousAxeViolations } from '../helpers/chromium.js';
import { startServer, type SpawnedServer } from '../helpers/server.js';

export { CHROMIUM, CHROMIUM_ARGS, seriousAxeViolations };

/** The most recent one-time console link the server printed. */
export function consoleLink(stderr: string): string {
  const all = [
    ...stderr.matchAll(/operator's console:\s+(http:\/\/127\.0\.0\.1:\d+\/open\?t=[A-Za-z0-9_-]+)/g),
  ];
  const last = all[all.length - 1];
  if (!last) throw new Error(`no console link in the banner:\n${stderr}`);
  return last[1] as string;
}

/** undefined when the component is there; else the reason, printed (and thrown under CI=true). */
export function requireOrSkip(what: string, reason: string | undefined): string | undefined {
  if (reason === undefined) return undefined;
  if (process.env.CI === 'true') throw new Error(`${what} must run under CI=true, but ${reason}`);
  console.warn(`skipping ${what}: ${reason}`);
  return reason;
}

/** A spawned server with an audit log, and its console open in headless Chromium (1280 px), every request noted. */
export interface OpenConsole {
  srv: SpawnedServer;
  /** Where the audit log is (`audit.jsonl`). */
  logDir: string;
  origin: string;
  browser: any; // eslint-disable-line @typescript-eslint/no-explicit-any
  page: any; // eslint-disable-line @typescript-eslint/no-explicit-any
  close(): Promise<void>;
}

export async function openConsole(workspace: string, requests: string[]): Promise<OpenConsole> {
  const logDir = mkdtempSync(path.join(tmpdir(), 'wb-console-audit-'));
  const srv = await startServer({ workspace, env: { SERVICE_AUDIT_LOG: path.join(logDir, 'audit.jsonl') } });
  const link = consoleLink(srv.stderr());
  const { chromium } = await importCached<Playwright>('playwright-core');
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, timeout: 60_000 });
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await ctx.newPage();
  page.on('request', (r: { url(): string }) => requests.push(r.url()));
  await page.goto(link);
  await page.waitForSelector('body[data-ready="yes"]', { timeout: 30_000 });
  return {
    srv,
    logDir,
    origin: new URL(link).origin,
    browser,
    page,
    close: async () => {
      await browser.close();
      await srv.stop();
      rmSync(logDir, { recursive: true, force: true });
    },
  };
}
