// Who may use the operator's console (docs/console.md#access): a one-time link (printed in the banner, or by
// `workbench-mcp console`) is exchanged once for a session cookie; each session has its own CSRF token that
// every state-changing request must send back. Links die after LINK_TTL_MS or their first use; sessions after
// SESSION_TTL_MS. The link key lets the operator's own CLI mint a fresh link; it lives in the state directory,
// private to the operator, like the kept bearer token. Secrets compared in constant time.
import type { Clock } from '../core/clock.js';
import { safeEqual } from '../core/constant-time.js';
import { randomBase64url } from '../core/random.js';

export const LINK_TTL_MS = 10 * 60_000;
export const SESSION_TTL_MS = 12 * 3600_000;
const MAX_LINKS = 16;
const MAX_SESSIONS = 32;

export interface Session {
  id: string;
  csrf: string;
  expiresAt: number;
}

function secret(): string {
  return randomBase64url(24);
}

export class ConsoleAccess {
  private readonly links = new Map<string, number>();
  private readonly sessions = new Map<string, Session>();
  /** What `workbench-mcp console` presents to mint a link. */
  readonly linkKey = secret();

  constructor(private readonly clock: Clock) {}

  /** A new one-time link token. */
  mintLink(): string {
    this.sweep();
    if (this.links.size >= MAX_LINKS) this.links.delete(this.links.keys().next().value as string);
    const t = secret();
    this.links.set(t, this.clock.now() + LINK_TTL_MS);
    return t;
  }

  /** Spends a link token: a session, or undefined for a stale, reused or unknown one. */
  redeem(token: string): Session | undefined {
    this.sweep();
    let found: string | undefined;
    for (const t of this.links.keys()) if (safeEqual(t, token)) found = t;
    if (found === undefined) return undefined;
    this.links.delete(found);
    if (this.sessions.size >= MAX_SESSIONS) this.sessions.delete(this.sessions.keys().next().value as string);
    const s: Session = { id: secret(), csrf: secret(), expiresAt: this.clock.now() + SESSION_TTL_MS };
    this.sessions.set(s.id, s);
    return s;
  }

  session(cookieValue: string | undefined): Session | undefined {
    if (!cookieValue) return undefined;
    this.sweep();
    for (const s of this.sessions.values()) if (safeEqual(s.id, cookieValue)) return s;
    return undefined;
  }

  csrfOk(s: Session, presented: string): boolean {
    return safeEqual(s.csrf, presented);
  }

  checkLinkKey(presented: string): boolean {
    return safeEqual(presented, this.linkKey);
  }

  private sweep(): void {
    const now = this.clock.now();
    for (const [t, until] of this.links) if (until <= now) this.links.delete(t);
    for (const [id, s] of this.sessions) if (s.expiresAt <= now) this.sessions.delete(id);
  }
}
