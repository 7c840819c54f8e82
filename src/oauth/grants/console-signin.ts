// "Approve from the console" on the authorization page (docs/console.md#sign-in): instead of the password, the
// person signing in asks the operator's console. The page shows a short pairing code; the console shows the
// pending sign-in (client name and redirect host, each in its own field) and approves it only with that code
// typed in — a stranger's pending sign-in is never approved by mistake, and three wrong codes withdraw the
// request (policy/approvals.ts).
// The password attempt limits (attempts.ts) do not apply here, so nobody who merely knows a client id can slow
// this path. The page waits with a refresh to a wait URL that carries its own random token (never the form's
// handle); that GET answers with the redirect once the operator decided.
import type { Clock } from '../../core/clock.js';
import { randomToken, type RandomSource } from '../secrets.js';
import { randomIndex } from '../../core/random.js';

/** What the console offers (satisfied by policy/approvals.ts's ApprovalDesk, wired by the composition root). */
export interface SignInApprovals {
  request(a: {
    kind: 'signin';
    clientKey: string;
    client: string;
    key: string;
    subject: string;
    why: string;
    code: string;
  }): { id: string };
  wait(
    id: string,
    ms: number,
    signal?: AbortSignal,
  ): Promise<{ result: 'approved' | 'denied' | 'pending'; note?: string }>;
  withdraw(id: string): void;
}

export const WAIT_TTL_MS = 10 * 60_000;
const MAX_WAITS = 64;
/** Letters and digits a person does not confuse (no 0/O, 1/I/L). */
const CODE_ALPHABET = 'ABCDEFGHJKMNPQRSTUVWXYZ23456789';

export interface SignInWait {
  handle: string;
  approvalId: string;
  code: string;
  expiresAt: number;
}

/** A pairing code like `K7P-2QX`. */
export function pairingCode(): string {
  let s = '';
  for (let i = 0; i < 6; i++) s += CODE_ALPHABET[randomIndex(CODE_ALPHABET.length)];
  return `${s.slice(0, 3)}-${s.slice(3)}`;
}

export class ConsoleSignIns {
  private readonly waits = new Map<string, SignInWait>();

  constructor(
    readonly approvals: SignInApprovals,
    private readonly clock: Clock,
    private readonly random: RandomSource,
  ) {}

  /** Files the sign-in on the console; returns the page's wait token and its pairing code. */
  start(
    handle: string,
    clientId: string,
    clientName: string,
    redirectHost: string,
  ): { token: string; code: string } {
    this.sweep();
    if (this.waits.size >= MAX_WAITS) {
      const [oldest, w] = this.waits.entries().next().value as [string, SignInWait];
      this.approvals.withdraw(w.approvalId);
      this.waits.delete(oldest);
    }
    const code = pairingCode();
    const { id } = this.approvals.request({
      kind: 'signin',
      clientKey: `oauth:${clientId}`,
      client: clientName,
      key: handle,
      // The host on its own: a name's own arrows and line breaks cannot stand in for it (docs/console.md#sign-in).
      subject: redirectHost,
      why: 'a sign-in asks for access to this workspace; approve it only if the code matches the sign-in page',
      code,
    });
    const token = randomToken(this.random);
    this.waits.set(token, { handle, approvalId: id, code, expiresAt: this.clock.now() + WAIT_TTL_MS });
    return { token, code };
  }

  get(token: string): SignInWait | undefined {
    this.sweep();
    return this.waits.get(token);
  }

  done(token: string): void {
    this.waits.delete(token);
  }

  private sweep(): void {
    const now = this.clock.now();
    for (const [t, w] of this.waits) if (w.expiresAt <= now) this.waits.delete(t);
  }
}
