// Authorization codes (docs/oauth.md#codes): single use — consumed on first presentation even when that
// exchange fails (docs/oauth.md#codes) — five minutes, bound to client, redirect URI, PKCE
// challenge and resource. A spent code is remembered a while so that a replay can revoke what the first
// exchange issued (RFC 6749 §4.1.2, RFC 9700 §4.5). Stored as digests; process-local; bounded.
import type { Clock } from '../../core/clock.js';
import type { AuthorizationRequest } from './pending.js';
import { digest, randomToken, type RandomSource } from '../secrets.js';

export const AUTH_CODE_TTL_MS = 5 * 60_000;
/** How long a spent or expired code is remembered for replay detection. */
export const SPENT_CODE_RETENTION_MS = 15 * 60_000;
export const MAX_CODES = 1024;

export interface CodeRecord {
  readonly grant: AuthorizationRequest;
  readonly issuedAt: number;
  readonly expiresAt: number;
  spent: boolean;
  /** The grant family the successful exchange started; revoked if the code is presented again. */
  familyId?: string;
}

export type Redemption =
  { status: 'fresh'; record: CodeRecord } | { status: 'spent'; record: CodeRecord } | { status: 'unknown' };

export class CodeStore {
  private readonly records = new Map<string, CodeRecord>();

  constructor(
    private readonly clock: Clock,
    private readonly random: RandomSource,
  ) {}

  issue(grant: AuthorizationRequest): string {
    this.prune();
    const code = randomToken(this.random, 32);
    const now = this.clock.now();
    this.records.set(digest(code), { grant, issuedAt: now, expiresAt: now + AUTH_CODE_TTL_MS, spent: false });
    while (this.records.size > MAX_CODES) this.records.delete(this.records.keys().next().value as string);
    return code;
  }

  /** Presents a code: the first presentation spends it, whatever happens next (docs/oauth.md#codes). */
  redeem(code: string): Redemption {
    this.prune();
    const record = this.records.get(digest(code));
    if (!record) return { status: 'unknown' };
    if (record.spent) return { status: 'spent', record };
    record.spent = true;
    return { status: 'fresh', record };
  }

  private prune(): void {
    const now = this.clock.now();
    for (const [k, r] of this.records) {
      if (now < r.issuedAt + SPENT_CODE_RETENTION_MS) break; // insertion order = issue order
      this.records.delete(k);
    }
  }
}
