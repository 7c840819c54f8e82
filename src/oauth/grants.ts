// Grant families: one per successful code exchange, carrying its refresh tokens and naming (claim `sid`) the
// access tokens issued under it. Refresh tokens rotate on every use (RFC 9700 §4.14.2, http-and-auth-contract
// "POST /oauth/token", beyond); presenting a retired one revokes the whole family, and a revoked family's
// access tokens stop working too. Refresh tokens live 30 days (decisions.md 7), are stored as digests, and
// the store is bounded: past MAX_FAMILIES the least recently used family is dropped (fail closed).
import type { Clock } from '../core/clock.js';
import { digest, randomToken, type RandomSource } from './secrets.js';

export const REFRESH_TOKEN_TTL_MS = 30 * 24 * 3600_000;
export const MAX_FAMILIES = 4096;
/** Retired refresh tokens remembered per family for reuse detection. */
export const MAX_RETIRED_PER_FAMILY = 32;

export interface Family {
  readonly id: string;
  readonly clientId: string;
  readonly resource: string;
  readonly scope?: string;
  current?: { digest: string; expiresAt: number };
  retired: string[];
  /** Expiry (ms) of the newest access token issued under this family. */
  accessExpiresAt: number;
}

export type RefreshLookup =
  | { status: 'current'; family: Family; expiresAt: number }
  | { status: 'retired'; family: Family }
  | { status: 'unknown' };

export class GrantStore {
  private readonly families = new Map<string, Family>();
  /** refresh-token digest → family id, for current and retired tokens. */
  private readonly index = new Map<string, string>();

  constructor(
    private readonly clock: Clock,
    private readonly random: RandomSource,
    private readonly maxFamilies = MAX_FAMILIES,
  ) {}

  start(clientId: string, resource: string, scope: string | undefined): Family {
    this.prune();
    // Alive for a minute until its first access token is noted, so a concurrent prune cannot drop it.
    const accessExpiresAt = this.clock.now() + 60_000;
    const family: Family = {
      id: randomToken(this.random, 16),
      clientId,
      resource,
      scope,
      retired: [],
      accessExpiresAt,
    };
    this.families.set(family.id, family);
    while (this.families.size > this.maxFamilies) this.revoke(this.families.keys().next().value as string);
    return family;
  }

  /** A new refresh token for `family`; the one it replaces is retired (kept only to detect reuse). */
  issueRefresh(family: Family): string {
    const token = randomToken(this.random, 32);
    const d = digest(token);
    if (family.current) {
      family.retired.push(family.current.digest);
      while (family.retired.length > MAX_RETIRED_PER_FAMILY)
        this.index.delete(family.retired.shift() as string);
    }
    family.current = { digest: d, expiresAt: this.clock.now() + REFRESH_TOKEN_TTL_MS };
    this.index.set(d, family.id);
    this.touch(family);
    return token;
  }

  findRefresh(token: string): RefreshLookup {
    const d = digest(token);
    const id = this.index.get(d);
    const family = id === undefined ? undefined : this.families.get(id);
    if (!family) return { status: 'unknown' };
    if (family.current?.digest === d)
      return { status: 'current', family, expiresAt: family.current.expiresAt };
    return { status: 'retired', family };
  }

  noteAccessToken(family: Family, expiresAt: number): void {
    family.accessExpiresAt = Math.max(family.accessExpiresAt, expiresAt);
  }

  /** Revokes a family: its refresh tokens and the access tokens naming it stop working. */
  revoke(familyId: string): void {
    const family = this.families.get(familyId);
    if (!family) return;
    if (family.current) this.index.delete(family.current.digest);
    for (const d of family.retired) this.index.delete(d);
    this.families.delete(familyId);
  }

  /** Access tokens are accepted only while their family exists (not revoked, not dropped). */
  isActive(familyId: string): boolean {
    return this.families.has(familyId);
  }

  get size(): number {
    return this.families.size;
  }

  /** The clients that hold a live grant (a refresh token or an unexpired access token). */
  clientsWithGrants(): Set<string> {
    this.prune();
    return new Set([...this.families.values()].map((f) => f.clientId));
  }

  private touch(family: Family): void {
    this.families.delete(family.id);
    this.families.set(family.id, family);
  }

  /** Drops families with nothing left alive: no valid refresh token and every access token expired. */
  private prune(): void {
    const now = this.clock.now();
    for (const f of [...this.families.values()]) {
      const refreshAlive = f.current !== undefined && now < f.current.expiresAt;
      if (!refreshAlive && now >= f.accessExpiresAt) this.revoke(f.id);
    }
  }
}
