// The liveness check of one spawner helper (spawner.ts): a ping every PING_MS; a helper that leaves one
// unanswered too long is reported through `onSilent` (the spawner replaces it). A late tick means this process
// was busy, not the helper: the pending ping's clock starts again.
import { readFileSync } from 'node:fs';
import { systemClock } from '../../core/clock.js';

/** The helper is pinged this often while it runs … */
export const PING_MS = 250;
/** … and replaced when a ping is unanswered this long and the kernel says it is stopped (SIGSTOP, a tracer) … */
export const STOPPED_AFTER_MS = 1000;
/** … or this long whatever its state (a loop). */
export const HUNG_AFTER_MS = 5000;

/** Whether the kernel reports `pid` as stopped (`T`) or stopped by a tracer (`t`). */
function stopped(pid: number | undefined): boolean {
  if (!pid) return false;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state === 'T' || state === 't';
  } catch {
    return false;
  }
}

export interface WatchedHelper {
  pid: number | undefined;
  /** Sends ping number `n`. */
  ping(n: number): void;
  /** The helper does not answer; `why` completes "the spawner helper …". */
  onSilent(why: string): void;
}

export class HelperWatch {
  private readonly timer: NodeJS.Timeout;
  /** The unanswered ping: its number and when it was sent. */
  private pending: { n: number; at: number } | undefined;
  private lastTick = systemClock.monotonic();

  /** `nextNumber` numbers pings from the same sequence as commands (spawner.ts checks ids against it). */
  constructor(
    private readonly helper: WatchedHelper,
    private readonly nextNumber: () => number,
  ) {
    this.timer = setInterval(() => this.tick(), PING_MS);
    this.timer.unref();
  }

  pong(n: number): void {
    if (this.pending?.n === n) this.pending = undefined;
  }

  stop(): void {
    clearInterval(this.timer);
    this.pending = undefined;
  }

  /**
   * One check: an unanswered ping past STOPPED_AFTER_MS reports a helper the kernel shows as stopped, and past
   * HUNG_AFTER_MS any helper.
   */
  private tick(): void {
    const now = systemClock.monotonic();
    const late = now - this.lastTick > 2 * PING_MS;
    this.lastTick = now;
    if (this.pending && late) this.pending.at = now;
    if (!this.pending) {
      this.pending = { n: this.nextNumber(), at: now };
      this.helper.ping(this.pending.n);
      return;
    }
    const waited = now - this.pending.at;
    if (waited >= HUNG_AFTER_MS) this.helper.onSilent(`did not answer for ${waited} ms`);
    else if (waited >= STOPPED_AFTER_MS && stopped(this.helper.pid))
      this.helper.onSilent('is stopped and does not answer');
  }
}
