// Wrong passwords on the authorization page, limited so that an attacker cannot lock the operator out
// (docs/security-model.md#under-attack-connections-and-the-password-page and
// docs/design-notes.md#password-attempts). A first rule counted failures globally and locked the form for
// everyone: behind a tunnel every request comes from 127.0.0.1, so anyone could deny the operator the page.
// Here:
// - every wrong password is answered after a short delay (authorize.ts holds the answer);
// - a generated password (100 bits) needs nothing more: no rate anyone can reach makes guessing it feasible;
// - a configured one is limited per page (PAGE_MAX_FAILURES, then the page is withdrawn), per client
//   (the first rule's numbers, counted per client_id instead of globally), and by a global budget of failures,
//   GLOBAL_BURST refilled at one per GLOBAL_REFILL_MS, whose last GLOBAL_RESERVE are only for clients that have
//   had fewer than CLEAN_CLIENT_FAILURES failures — so an attacker reusing its clients can never spend the
//   operator's first attempts, and one that makes a new client for every guess is held to the refill rate.
// Time comes from the injected clock, so tests never sleep.
import type { Clock } from '../../core/clock.js';

/** Every wrong password's answer is held this long (the per-attempt delay). */
export const WRONG_PASSWORD_DELAY_MS = 500;
/** Wrong passwords on one page before it is withdrawn (configured password). */
export const PAGE_MAX_FAILURES = 5;
/** Per client: failures answered without a delay, then 1, 2, 4, 8, 16 s, then LOCK_MS after each one. */
export const FREE_FAILURES = 5;
export const LOCK_AFTER_FAILURES = 10;
export const LOCK_MS = 60_000;
/** A client's count is forgotten after this long without a failure. */
export const QUIET_RESET_MS = 15 * 60_000;
/** Global budget of wrong passwords (configured password). */
export const GLOBAL_BURST = 30;
export const GLOBAL_REFILL_MS = 6_000;
export const GLOBAL_RESERVE = 10;
/** A client with fewer failures than this may spend the reserve. */
export const CLEAN_CLIENT_FAILURES = 3;
/** Clients whose failures are remembered at once (the oldest record is forgotten first). */
export const MAX_TRACKED_CLIENTS = 4096;

export type Verdict = { ok: true } | { ok: false; waitMs: number; scope: 'client' | 'server' };

interface ClientRecord {
  failures: number;
  lastFailureAt: number;
  blockedUntil: number;
}

export class PasswordAttempts {
  private readonly clients = new Map<string, ClientRecord>();
  private budget = GLOBAL_BURST;
  private budgetAt: number;

  /** `generated`: the password was generated for this run (no limit beyond the per-attempt delay). */
  constructor(
    private readonly clock: Clock,
    readonly generated: boolean,
  ) {
    this.budgetAt = clock.monotonic();
  }

  /** Wrong passwords one page may take before it is withdrawn; undefined: no limit. */
  get pageLimit(): number | undefined {
    return this.generated ? undefined : PAGE_MAX_FAILURES;
  }

  /** Whether a password from a page of `clientId` may be checked now. */
  check(clientId: string): Verdict {
    if (this.generated) return { ok: true };
    const now = this.clock.monotonic();
    const rec = this.record(clientId, now);
    if (rec && rec.blockedUntil > now) return { ok: false, waitMs: rec.blockedUntil - now, scope: 'client' };
    this.refill(now);
    const floor = (rec?.failures ?? 0) < CLEAN_CLIENT_FAILURES ? 0 : GLOBAL_RESERVE;
    if (this.budget >= floor + 1) return { ok: true };
    return { ok: false, waitMs: Math.ceil((floor + 1 - this.budget) * GLOBAL_REFILL_MS), scope: 'server' };
  }

  /** Records a wrong password from a page of `clientId`. */
  failure(clientId: string): void {
    if (this.generated) return;
    const now = this.clock.monotonic();
    const rec = this.record(clientId, now) ?? { failures: 0, lastFailureAt: now, blockedUntil: 0 };
    rec.failures++;
    rec.lastFailureAt = now;
    rec.blockedUntil = now + delayAfter(rec.failures);
    this.clients.delete(clientId); // re-inserted last: the map's order is least recently failing first
    this.clients.set(clientId, rec);
    while (this.clients.size > MAX_TRACKED_CLIENTS)
      this.clients.delete(this.clients.keys().next().value as string);
    this.refill(now);
    this.budget = Math.max(0, this.budget - 1);
  }

  /** The right password: that client's count starts again (the global budget refills on its own). */
  success(clientId: string): void {
    this.clients.delete(clientId);
  }

  /** Failures remembered for `clientId` (tests and diagnostics). */
  failureCount(clientId: string): number {
    return this.record(clientId, this.clock.monotonic())?.failures ?? 0;
  }

  private record(clientId: string, now: number): ClientRecord | undefined {
    const rec = this.clients.get(clientId);
    if (rec && now - rec.lastFailureAt >= QUIET_RESET_MS) {
      this.clients.delete(clientId);
      return undefined;
    }
    return rec;
  }

  private refill(now: number): void {
    this.budget = Math.min(GLOBAL_BURST, this.budget + (now - this.budgetAt) / GLOBAL_REFILL_MS);
    this.budgetAt = now;
  }
}

/** The wait imposed on a client after `failures` wrong passwords. */
export function delayAfter(failures: number): number {
  if (failures < FREE_FAILURES) return 0;
  if (failures >= LOCK_AFTER_FAILURES) return LOCK_MS;
  return 1000 * 2 ** (failures - FREE_FAILURES);
}
