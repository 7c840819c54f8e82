// One-time permission grants asked through the client (docs/design-notes.md#permission-grants, the 2026-07-28
// multi-round-trip requests): a `safe`/`trusted` refusal the user could lift becomes an `input_required`
// result with one elicitation; the retried call that carries the user's acceptance and our `requestState`
// runs once. A grant is bound to the exact tool and arguments, lives GRANT_TTL_MS, and is spent by its first
// answer (accepted, declined or not), so a replayed or altered retry is refused. Process-local, bounded,
// clock injected.
import { createHash } from 'node:crypto';
import type { Clock } from '../core/clock.js';
import { randomBase64url } from '../core/random.js';

export const GRANT_TTL_MS = 120_000;
const MAX_PENDING = 256;
/** The key our one elicitation is asked and answered under. */
export const APPROVAL_KEY = 'approve';

export interface InputRequiredPayload {
  inputRequests: Record<string, { method: 'elicitation/create'; params: Record<string, unknown> }>;
  requestState: string;
}

export type Redeemed = { ok: true } | { ok: false; reason: 'stale' | 'mismatch' | 'declined' | 'no_answer' };

interface Pending {
  fingerprint: string;
  expiresAt: number;
}

/** The same tool and arguments, whatever the key order of the JSON they came in. */
export function fingerprint(tool: string, args: unknown): string {
  const canon = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(canon)
      : v && typeof v === 'object'
        ? Object.fromEntries(
            Object.keys(v as object)
              .sort()
              .map((k) => [k, canon((v as Record<string, unknown>)[k])]),
          )
        : v;
  return createHash('sha256')
    .update(tool)
    .update('\0')
    .update(JSON.stringify(canon(args)))
    .digest('hex');
}

/** This process's one-time permission grants (oauth/grants/grants.ts keeps the OAuth refresh grants, another thing). */
export class OneTimeGrants {
  private readonly pending = new Map<string, Pending>();

  constructor(private readonly clock: Clock) {}

  /** A new question for the user about exactly this call. */
  ask(tool: string, args: unknown, message: string): InputRequiredPayload {
    this.sweep();
    if (this.pending.size >= MAX_PENDING) this.pending.delete(this.pending.keys().next().value as string);
    const requestState = randomBase64url(18);
    this.pending.set(requestState, {
      fingerprint: fingerprint(tool, args),
      expiresAt: this.clock.now() + GRANT_TTL_MS,
    });
    return {
      requestState,
      inputRequests: {
        [APPROVAL_KEY]: {
          method: 'elicitation/create',
          params: {
            mode: 'form',
            message,
            requestedSchema: { type: 'object', properties: {} },
          },
        },
      },
    };
  }

  /** Spends the grant a retry names: ok only for an unexpired, unused grant of this call, accepted by the user. */
  redeem(tool: string, args: unknown, requestState: unknown, inputResponses: unknown): Redeemed {
    this.sweep();
    const p = typeof requestState === 'string' ? this.pending.get(requestState) : undefined;
    if (!p) return { ok: false, reason: 'stale' };
    this.pending.delete(requestState as string);
    if (p.fingerprint !== fingerprint(tool, args)) return { ok: false, reason: 'mismatch' };
    const answer =
      inputResponses && typeof inputResponses === 'object'
        ? (inputResponses as Record<string, unknown>)[APPROVAL_KEY]
        : undefined;
    const action = answer && typeof answer === 'object' ? (answer as { action?: unknown }).action : undefined;
    if (action === undefined) return { ok: false, reason: 'no_answer' };
    return action === 'accept' ? { ok: true } : { ok: false, reason: 'declined' };
  }

  private sweep(): void {
    const now = this.clock.now();
    for (const [k, p] of this.pending) if (p.expiresAt <= now) this.pending.delete(k);
  }
}
