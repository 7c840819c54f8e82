// Waiting for a command's output to settle: after the first new output, a call returns once the command has
// been quiet for SETTLE_QUIET_MS (a prompt, a finished burst), or SETTLE_MAX_MS after that first output at the
// latest, or at its deadline or the exit. write_stdin uses it for every write and poll; exec_command for tty
// commands, so a REPL answers its prompt without waiting out yield_time_ms.
import type { Command } from '../../process/commands/command.js';
import { systemClock } from '../../core/clock.js';

/** After the first new output, return once the command has been quiet this long … */
const SETTLE_QUIET_MS = 100;
/** … or this long after the first new output at the latest. */
const SETTLE_MAX_MS = 1000;

export interface Totals {
  stdout: number;
  stderr: number;
}

export function totals(c: Command): Totals {
  return { stdout: c.streams.stdout.total, stderr: c.streams.stderr.total };
}

function grown(c: Command, t: Totals): boolean {
  return c.streams.stdout.total > t.stdout || c.streams.stderr.total > t.stderr;
}

/**
 * A tty command's first call (exec_command): return once its output has been quiet this long (a prompt), with
 * no cap while output keeps coming (a build writing steadily runs on to yield_time_ms).
 */
export const FIRST_OUTPUT_SETTLE = { quietMs: 250, maxMs: Infinity };

/** Wait for output past `since` (then let it settle briefly), the exit, or the deadline. */
export async function waitForOutput(
  c: Command,
  since: Totals,
  yieldMs: number,
  signal: AbortSignal,
  settle: { quietMs: number; maxMs: number } = { quietMs: SETTLE_QUIET_MS, maxMs: SETTLE_MAX_MS },
): Promise<void> {
  const deadline = systemClock.monotonic() + yieldMs;
  const got = await c.waitUntil(() => !c.running || grown(c, since), yieldMs, signal);
  if (!got || !c.running) return;
  const settleEnd = Math.min(deadline, systemClock.monotonic() + settle.maxMs);
  for (;;) {
    const left = settleEnd - systemClock.monotonic();
    if (left <= 0 || signal.aborted) return;
    const last = totals(c);
    const more = await c.waitUntil(
      () => !c.running || grown(c, last),
      Math.min(settle.quietMs, left),
      signal,
    );
    if (!more || !c.running) return;
  }
}
