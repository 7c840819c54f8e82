// What apply_patch and edit_file changed, kept for the operator's console (docs/console.md#edits): per edit,
// each file's bytes before and after. A revert is a commit through the same engine (locks, atomic commit, the
// committer's recheck): each file must still hold exactly what the edit wrote, else nothing is written and the
// revert answers PATCH_CONFLICT. Bounded by count and bytes; a file over MAX_KEPT_FILE_BYTES is listed but its
// edit cannot be reverted from here.
import { ToolError } from '../core/tool-error.js';
import type { Clock } from '../core/clock.js';
import { Feed } from '../core/feed.js';
import type { CommitStep } from './commit.js';
import { commitPlan, type PatchEnv } from './engine.js';
import type { Plan } from './plan.js';
import { missingDirs, resolveFileTarget, type Target } from './targets.js';

export const MAX_EDITS = 100;
export const MAX_KEPT_BYTES = 32 * 1024 * 1024;
export const MAX_KEPT_FILE_BYTES = 1024 * 1024;

export interface EditedFile {
  path: string;
  /** null: the edit created the file. */
  before: Buffer | null;
  /** null: the edit removed the file. */
  after: Buffer | null;
  beforeMode?: number;
  afterMode?: number;
}

export interface EditEntry {
  id: string;
  time: number;
  client: string;
  tool: string;
  files: EditedFile[];
  /** False when a file was too large to keep. */
  revertible: boolean;
  /** Set when the console reverted it. */
  revertedBy?: string;
}

export class EditJournal {
  private readonly entries: EditEntry[] = [];
  private bytes = 0;
  private seq = 0;
  /** Each new edit (and each revert, itself an edit), for the console. */
  readonly changes = new Feed<EditEntry>(20);

  constructor(private readonly clock: Clock) {}

  /** Called by the engine after a commit (PatchEnv.committed). */
  record(client: string, tool: string, steps: readonly CommitStep[]): EditEntry {
    let revertible = true;
    const files: EditedFile[] = steps.map((st) => {
      const before = st.kind === 'create' ? null : st.baseline.bytes;
      const after = st.kind === 'remove' ? null : st.content;
      if ((before?.length ?? 0) > MAX_KEPT_FILE_BYTES || (after?.length ?? 0) > MAX_KEPT_FILE_BYTES) {
        revertible = false;
        return { path: st.rel, before: null, after: null };
      }
      return {
        path: st.rel,
        before,
        after,
        ...(st.kind !== 'create' ? { beforeMode: st.baseline.mode } : {}),
        ...(st.kind !== 'remove' ? { afterMode: st.mode } : {}),
      };
    });
    const e: EditEntry = { id: `E${++this.seq}`, time: this.clock.now(), client, tool, files, revertible };
    this.entries.push(e);
    this.bytes += sizeOf(e);
    while (this.entries.length > MAX_EDITS || (this.bytes > MAX_KEPT_BYTES && this.entries.length > 1))
      this.bytes -= sizeOf(this.entries.shift() as EditEntry);
    this.changes.publish(e);
    return e;
  }

  list(): readonly EditEntry[] {
    return this.entries;
  }

  get(id: string): EditEntry | undefined {
    return this.entries.find((e) => e.id === id);
  }

  /**
   * Puts back what edit `id` changed, if every file still holds what it wrote (one atomic commit, under the same
   * per-file locks as apply_patch). `env.committed` records the revert as an edit of its own.
   */
  async revert(env: PatchEnv, id: string): Promise<EditEntry> {
    const e = this.get(id);
    if (!e) throw new ToolError('NOT_FOUND', `edit ${id} is no longer kept`, { edit: id });
    if (!e.revertible)
      throw new ToolError(
        'INVALID_ARGUMENT',
        `edit ${id} changed a file too large to keep; revert it by hand`,
        {
          edit: id,
        },
      );
    if (e.revertedBy)
      throw new ToolError('PATCH_ALREADY_APPLIED', `edit ${id} was already reverted (${e.revertedBy})`, {
        edit: id,
      });
    const targets = e.files.map((f) => resolveFileTarget(env.root, f.path, 'revert'));
    await commitPlan(
      env,
      targets.map((t) => t.file),
      () => reversePlan(e, targets),
    );
    const last = this.entries[this.entries.length - 1];
    e.revertedBy = last && last !== e ? last.id : 'reverted';
    this.changes.publish(e);
    return e;
  }
}

function sizeOf(e: EditEntry): number {
  return e.files.reduce((n, f) => n + (f.before?.length ?? 0) + (f.after?.length ?? 0), 0);
}

/** The edit's steps backwards: each baseline is what the edit wrote, so a file changed since is a conflict. */
function reversePlan(e: EditEntry, targets: readonly Target[]): Plan {
  const plan: Plan = { steps: [], affected: [], additions: 0, removals: 0, fuzz: 0 };
  for (let i = e.files.length - 1; i >= 0; i--) {
    const f = e.files[i] as EditedFile;
    const t = targets[i] as Target;
    const base = { rel: t.rel, dir: t.dir, name: t.name };
    if (f.after && f.before)
      plan.steps.push({
        ...base,
        kind: 'replace',
        content: f.before,
        mode: f.beforeMode ?? 0o644,
        baseline: { bytes: f.after, mode: f.afterMode ?? 0o644 },
      });
    else if (f.after)
      plan.steps.push({ ...base, kind: 'remove', baseline: { bytes: f.after, mode: f.afterMode ?? 0o644 } });
    else if (f.before)
      plan.steps.push({
        ...base,
        kind: 'create',
        content: f.before,
        mode: f.beforeMode ?? 0o644,
        missingDirs: missingDirs(t),
      });
    plan.affected.push({
      path: t.rel,
      operation: f.after && f.before ? 'update' : f.after ? 'delete' : 'add',
    });
  }
  return plan;
}
