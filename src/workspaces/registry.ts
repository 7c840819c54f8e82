// The registry of open workspaces (docs/tools.md#several-workspaces): id → real path, mode, and for a worktree
// its branch, base and source repository. Bounded (MAX_WORKSPACES). Kept in `workspaces.json` of the state
// directory, written atomically (state/state-dir.ts writeKept), so ids survive a restart; with
// SERVICE_STATE_DIR=off it lives in memory only. At start the file is read again and a workspace whose
// directory vanished is dropped with a log line. Pure bookkeeping: building a workspace's services is
// desk.ts's.
import { statSync } from 'node:fs';
import type { Logger } from '../core/log.js';
import { readKept, writeKept, type KeptState } from '../state/state-dir.js';

/** At most this many workspaces are open at once (the default workspace not counted). */
export const MAX_WORKSPACES = 32;
export const REGISTRY_FILE = 'workspaces.json';

export interface WorkspaceRecord {
  id: string;
  /** Real path of the directory served. */
  path: string;
  mode: 'checkout' | 'worktree';
  /** Worktrees: the branch made, the commit it started from, the source's base (branch name or commit). */
  branch?: string;
  base?: string;
  baseRef?: string;
  /** Worktrees: the source repository's real path and its object directory (the clone's alternate). */
  source?: string;
  objects?: string;
}

const ID = /^[0-9a-f]{8}$/;

function isRecord(v: unknown): v is WorkspaceRecord {
  if (typeof v !== 'object' || v === null) return false;
  const r = v as Record<string, unknown>;
  const str = (k: string) => r[k] === undefined || typeof r[k] === 'string';
  return (
    typeof r.id === 'string' &&
    ID.test(r.id) &&
    typeof r.path === 'string' &&
    r.path.startsWith('/') &&
    (r.mode === 'checkout' || r.mode === 'worktree') &&
    ['branch', 'base', 'baseRef', 'source', 'objects'].every(str) &&
    (r.mode === 'checkout' || (typeof r.source === 'string' && typeof r.objects === 'string'))
  );
}

function isDir(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

export class WorkspaceRegistry {
  private readonly byId = new Map<string, WorkspaceRecord>();

  /** `kept`: the state directory, or undefined to keep nothing (SERVICE_STATE_DIR=off). */
  constructor(
    private readonly kept: KeptState | undefined,
    private readonly log: Logger,
  ) {}

  get persistent(): boolean {
    return this.kept !== undefined;
  }

  /** Reads the kept registry: every well-formed record whose directory still exists, up to the bound. */
  load(): void {
    if (!this.kept) return;
    let list: unknown;
    try {
      list = JSON.parse(readKept(this.kept, REGISTRY_FILE) ?? '[]');
    } catch (e) {
      this.log.warn('the kept workspaces cannot be read; none are reopened', { error: String(e) });
      return;
    }
    const dropped: string[] = [];
    for (const r of Array.isArray(list) ? list : []) {
      if (!isRecord(r) || this.byId.size >= MAX_WORKSPACES) continue;
      if (isDir(r.path)) this.byId.set(r.id, r);
      else dropped.push(r.id);
    }
    for (const id of dropped) this.log.warn('a kept workspace is gone and was dropped', { workspace: id });
    if (dropped.length) this.save();
  }

  get size(): number {
    return this.byId.size;
  }

  get(id: string): WorkspaceRecord | undefined {
    return this.byId.get(id);
  }

  list(): WorkspaceRecord[] {
    return [...this.byId.values()];
  }

  /** The open checkout of `path`, if any (opening the same directory twice gives the same id). */
  checkoutOf(path: string): WorkspaceRecord | undefined {
    return this.list().find((r) => r.mode === 'checkout' && r.path === path);
  }

  add(r: WorkspaceRecord): void {
    this.byId.set(r.id, r);
    this.save();
  }

  remove(id: string): void {
    if (this.byId.delete(id)) this.save();
  }

  private save(): void {
    if (!this.kept) return;
    try {
      writeKept(this.kept, REGISTRY_FILE, JSON.stringify(this.list(), null, 1) + '\n', { replace: true });
    } catch (e) {
      this.log.warn('the open workspaces cannot be kept for the next start', { error: String(e) });
    }
  }
}
