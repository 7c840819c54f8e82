// Password attempts on the authorization page, counted globally — behind a tunnel every request comes from
// 127.0.0.1, so per-address counting would be meaningless (decisions.md 12): after 5 failures each further
// attempt waits 1, 2, 4, 8, 16 s; after 10 the form is locked for 60 s, and again after each failure past
// that; never permanently. A success resets the count, and so do 15 quiet minutes. Time comes from the
// injected clock, so tests never sleep.
import type { Clock } from '../core/clock.js';

export const FREE_FAILURES = 5;
export const LOCK_AFTER_FAILURES = 10;
export const LOCK_MS = 60_000;
export const QUIET_RESET_MS = 15 * 60_000;

export class PasswordAttempts {
  private failures = 0;
  private lastFailureAt = 0;
  private blockedUntil = 0;

  constructor(private readonly clock: Clock) {}

  /** Milliseconds before the next attempt may be checked; 0 when one may be checked now. */
  blockedFor(): number {
    const now = this.clock.monotonic();
    if (this.failures > 0 && now - this.lastFailureAt >= QUIET_RESET_MS) this.success();
    return Math.max(0, this.blockedUntil - now);
  }

  /** Records a wrong password and returns how long the next attempt must wait (ms). */
  failure(): number {
    const now = this.clock.monotonic();
    this.failures++;
    this.lastFailureAt = now;
    this.blockedUntil = now + delayAfter(this.failures);
    return this.blockedUntil - now;
  }

  success(): void {
    this.failures = 0;
    this.blockedUntil = 0;
  }

  get failureCount(): number {
    return this.failures;
  }
}

/** The wait imposed after `failures` consecutive wrong passwords. */
export function delayAfter(failures: number): number {
  if (failures < FREE_FAILURES) return 0;
  if (failures >= LOCK_AFTER_FAILURES) return LOCK_MS;
  return 1000 * 2 ** (failures - FREE_FAILURES);
}
