// Authorization requests waiting for the operator's password. GET /oauth/authorize validates the request and
// files it here under a random handle, which the page carries as its CSRF token (RFC 6749 §10.12, RFC 9700
// §4.7); POST /oauth/authorize acts only on a filed request, so a forged or altered submission has nothing to
// act on. Handles are stored as digests, expire after 10 minutes, and at most 256 wait at once; past that a
// page that has taken a wrong password goes first, then one of the dynamic client with the most pages, so an
// attacker guessing or opening pages for its own client cannot push out the operator's, and the
// pre-registered client's only when nothing else waits
// (docs/security-model.md#under-attack-connections-and-the-password-page).
import type { Clock } from '../../core/clock.js';
import { digest, randomToken, type RandomSource } from '../secrets.js';

export const PENDING_TTL_MS = 10 * 60_000;
export const MAX_PENDING = 256;

export interface AuthorizationRequest {
  clientId: string;
  redirectUri: string;
  state?: string;
  codeChallenge: string;
  /** The resource the code and its tokens are bound to: `<base>/mcp` of the request. */
  resource: string;
  scope?: string;
  /** The public origin the request arrived on: the issuer (`iss`) of the response. */
  base: string;
}

interface Entry {
  request: AuthorizationRequest;
  expiresAt: number;
  /** Wrong passwords submitted on this page. */
  failures: number;
}

export class PendingRequests {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly clock: Clock,
    private readonly random: RandomSource,
    /** The pre-registered client, whose pages go only when nothing else can (a registration flood's mitigation). */
    private readonly lastToGo?: string,
  ) {}

  add(request: AuthorizationRequest): string {
    this.prune();
    const handle = randomToken(this.random, 32);
    this.entries.set(digest(handle), { request, expiresAt: this.clock.now() + PENDING_TTL_MS, failures: 0 });
    while (this.entries.size > MAX_PENDING) this.entries.delete(this.evictable());
    return handle;
  }

  /** Records a wrong password on the page of `handle`; returns how many that page has taken. */
  recordFailure(handle: string): number {
    const e = this.entries.get(digest(handle));
    if (!e) return 0;
    return ++e.failures;
  }

  /**
   * The key to drop when full: the oldest page that has taken a wrong password; else the oldest page of the
   * client with the most pages waiting (a flood of pages from one client pushes out only its own); else the
   * oldest.
   */
  private evictable(): string {
    const perClient = new Map<string, number>();
    for (const [k, e] of this.entries) {
      if (e.failures > 0) return k;
      if (e.request.clientId !== this.lastToGo)
        perClient.set(e.request.clientId, (perClient.get(e.request.clientId) ?? 0) + 1);
    }
    let top: string | undefined;
    let most = 0;
    for (const [client, n] of perClient) if (n > most) [top, most] = [client, n];
    for (const [k, e] of this.entries) if (e.request.clientId === top) return k;
    return this.entries.keys().next().value as string;
  }

  /** The clients with a page waiting, each with whether one of its pages has taken no wrong password. */
  waitingClients(): Map<string, boolean> {
    this.prune();
    const out = new Map<string, boolean>();
    for (const e of this.entries.values())
      out.set(e.request.clientId, (out.get(e.request.clientId) ?? false) || e.failures === 0);
    return out;
  }

  get(handle: string | undefined): AuthorizationRequest | undefined {
    if (!handle) return undefined;
    const e = this.entries.get(digest(handle));
    if (!e) return undefined;
    if (this.clock.now() >= e.expiresAt) {
      this.entries.delete(digest(handle));
      return undefined;
    }
    return e.request;
  }

  /** Removes a request once it has been answered (approved or denied): a handle works for one answer. */
  take(handle: string): void {
    this.entries.delete(digest(handle));
  }

  private prune(): void {
    const now = this.clock.now();
    for (const [k, e] of this.entries) if (now >= e.expiresAt) this.entries.delete(k);
  }
}
