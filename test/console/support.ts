// What the console tests share: the banner's one-time link, Chromium's path and flags (test/helpers/chromium.ts),
// and the rule for a missing component (skip with a reason on a laptop, fail under CI=true).
export { CHROMIUM, CHROMIUM_ARGS } from '../helpers/chromium.js';

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
