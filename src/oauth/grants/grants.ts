// Grant families: one per successful code exchange, carrying its refresh tokens and naming (claim `sid`) the
// access tokens issued under it. Refresh tokens rotate on every use (RFC 9700 §4.14.2,
// docs/oauth.md#refresh-tokens); presenting a retired one revokes the whole family, and a revoked family's
// access tokens stop working too. Refresh tokens live 30 days (docs/design-notes.md#limits), are stored as
// digests, and the store is bounded: past MAX_FAMILIES the least recently used family is dropped (fail
// closed). Families of clients whose identity outlives the process (metadata-document clients, the
// pre-registered client) are written to the state directory when they change and read back at start, so their
// refresh tokens — and, with a kept signing key, their access tokens — survive a restart; only digests are
// written, at most MAX_KEPT_FAMILIES, expired ones never (docs/design-notes.md#kept-credentials). Dynamic
// registrations stay process-local, and so do their grants.
import type { Clock } from '../../core/clock.js';
import { digest, randomToken, type RandomSource } from '../secrets.js';

export const REFRESH_TOKEN_TTL_MS = 30 * 24 * 3600_000;
export const MAX_FAMILIES = 4096;
/** Retired refresh tokens remembered per family for reuse detection. */
export const MAX_RETIRED_PER_FAMILY = 32;
/** Families written to the state directory (the most recently used). */
export const MAX_KEPT_FAMILIES = 256;

/** Where kept families are read from and written to (state/grant-file.ts); failures are the writer's to report. */
export interface GrantPersistence {
  /** Whether this client's grants outlive the process. */
  keeps(clientId: string): boolean;
  load(): string | undefined;
  save(text: string): void;
}

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

  private saveQueued = false;

  constructor(
    private readonly clock: Clock,
    private readonly random: RandomSource,
    private readonly maxFamilies = MAX_FAMILIES,
    private readonly persist?: GrantPersistence,
  ) {
    if (persist) for (const f of parseKept(persist.load(), clock.now(), persist)) this.restore(f);
  }

  private restore(f: Family): void {
    this.families.set(f.id, f);
    if (f.current) this.index.set(f.current.digest, f.id);
    for (const d of f.retired) this.index.set(d, f.id);
  }

  /** Writes the kept families once the current step is done (several changes, one write). */
  private changed(clientId: string): void {
    if (!this.persist?.keeps(clientId) || this.saveQueued) return;
    this.saveQueued = true;
    queueMicrotask(() => {
      this.save(); // its own pruning changes nothing more to write: saveQueued is still set
      this.saveQueued = false;
    });
  }

  private save(): void {
    const persist = this.persist;
    if (!persist) return;
    this.prune();
    const kept = [...this.families.values()]
      .filter((f) => persist.keeps(f.clientId))
      .slice(-MAX_KEPT_FAMILIES);
    persist.save(JSON.stringify({ version: 1, families: kept }));
  }

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
    this.changed(clientId);
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
    this.changed(family.clientId);
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
    this.changed(family.clientId);
  }

  /** Revokes a family: its refresh tokens and the access tokens naming it stop working. */
  revoke(familyId: string): void {
    const family = this.families.get(familyId);
    if (!family) return;
    if (family.current) this.index.delete(family.current.digest);
    for (const d of family.retired) this.index.delete(d);
    this.families.delete(familyId);
    this.changed(family.clientId);
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

const DIGEST = /^[0-9a-f]{64}$/;
const ID = /^[A-Za-z0-9_-]{8,64}$/;

function finite(v: unknown): v is number {
  return typeof v === 'number' && Number.isFinite(v);
}

function str(v: unknown, max: number): v is string {
  return typeof v === 'string' && v.length > 0 && v.length <= max;
}

/** One kept family, checked field by field; undefined when anything is off (the file is ours, but bounded). */
function familyOf(v: unknown): Family | undefined {
  if (!v || typeof v !== 'object') return undefined;
  const o = v as Record<string, unknown>;
  if (!str(o.id, 64) || !ID.test(o.id) || !str(o.clientId, 2000) || !str(o.resource, 2000)) return undefined;
  if (o.scope !== undefined && typeof o.scope !== 'string') return undefined;
  if (!finite(o.accessExpiresAt)) return undefined;
  const cur = o.current as { digest?: unknown; expiresAt?: unknown } | undefined;
  if (
    cur !== undefined &&
    (!cur || !str(cur.digest, 64) || !DIGEST.test(cur.digest) || !finite(cur.expiresAt))
  )
    return undefined;
  if (!Array.isArray(o.retired) || o.retired.length > MAX_RETIRED_PER_FAMILY) return undefined;
  if (!o.retired.every((d) => typeof d === 'string' && DIGEST.test(d))) return undefined;
  return {
    id: o.id,
    clientId: o.clientId,
    resource: o.resource,
    scope: o.scope as string | undefined,
    current: cur ? { digest: cur.digest as string, expiresAt: cur.expiresAt as number } : undefined,
    retired: [...(o.retired as string[])],
    accessExpiresAt: o.accessExpiresAt,
  };
}

/** The kept families still alive at `now`, of clients that are still kept; malformed entries are skipped. */
function parseKept(text: string | undefined, now: number, persist: GrantPersistence): Family[] {
  if (text === undefined) return [];
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return [];
  }
  const list = (doc as { version?: unknown; families?: unknown })?.families;
  if ((doc as { version?: unknown })?.version !== 1 || !Array.isArray(list)) return [];
  const out: Family[] = [];
  for (const v of list.slice(-MAX_KEPT_FAMILIES)) {
    const f = familyOf(v);
    if (!f || !persist.keeps(f.clientId)) continue;
    const refreshAlive = f.current !== undefined && now < f.current.expiresAt;
    if (refreshAlive || now < f.accessExpiresAt) out.push(f);
  }
  return out;
}
