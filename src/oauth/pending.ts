// Authorization requests waiting for the operator's password. GET /oauth/authorize validates the request
// and files it here under a random handle, which the page carries as its CSRF token (RFC 6749 §10.12,
// RFC 9700 §4.7); POST /oauth/authorize acts only on a filed request, so a forged or altered submission has
// nothing to act on. Handles are stored as digests, expire after 10 minutes, and at most 256 wait at once.
import type { Clock } from '../core/clock.js';
import { digest, randomToken, type RandomSource } from './secrets.js';

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
}

export class PendingRequests {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly clock: Clock,
    private readonly random: RandomSource,
  ) {}

  add(request: AuthorizationRequest): string {
    this.prune();
    const handle = randomToken(this.random, 32);
    this.entries.set(digest(handle), { request, expiresAt: this.clock.now() + PENDING_TTL_MS });
    while (this.entries.size > MAX_PENDING) this.entries.delete(this.entries.keys().next().value as string);
    return handle;
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
