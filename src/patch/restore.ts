// Restoring files to given contents (revert_changes, the console's "Revert to this review point"; docs/tools.md#
// revert_changes): one commit through the engine, as apply_patch writes — the per-file locks, the committer's
// atomic writes and its recheck of each baseline. Each file must hold, when read under the locks, exactly what
// the caller expects (`expect`: the content of the review point's "now"), else nothing is written and the
// answer is PATCH_CONFLICT: a file changed by someone else in between would be lost.
import { ToolError } from '../core/tool-error.js';
import type { CommitStep } from './commit.js';
import { commitPlan, type PatchEnv } from './engine.js';
import { readSnapshot } from './fs-safe.js';
import type { Plan } from './plan.js';
import { missingDirs, resolveFileTarget, type Target } from './targets.js';

export interface Restore {
  /** Workspace-relative path. */
  rel: string;
  /** What the file must hold afterwards; null: it must not exist. */
  content: Buffer | null;
  /** Mode bits for a file written (0o644 or 0o755). */
  mode: number;
  /** What the file holds now, as the caller saw it; null: absent. */
  expect: Buffer | null;
}

/** Writes every `Restore` in one atomic commit; returns the plan (its steps went to env.committed). */
export async function restoreFiles(env: PatchEnv, files: readonly Restore[], tool: string): Promise<Plan> {
  const targets = files.map((f) => resolveFileTarget(env.root, f.rel, tool));
  return commitPlan(
    env,
    targets.map((t) => t.file),
    () => restorePlan(files, targets),
  );
}

function current(t: Target): { bytes: Buffer; mode: number } | null {
  try {
    const s = readSnapshot(t.file);
    return { bytes: s.buf, mode: s.mode };
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
}

function restorePlan(files: readonly Restore[], targets: readonly Target[]): Plan {
  const plan: Plan = { steps: [], affected: [], additions: 0, removals: 0, fuzz: 0 };
  files.forEach((f, i) => {
    const t = targets[i] as Target;
    const now = current(t);
    const same = now === null ? f.expect === null : f.expect !== null && now.bytes.equals(f.expect);
    if (!same) throw changedSince(f.rel);
    const base = { rel: t.rel, dir: t.dir, name: t.name };
    let step: CommitStep | null = null;
    if (now && f.content) {
      // The executable bits follow the point (git keeps 0o755 or 0o644); the rest of the mode stays.
      const mode = f.mode & 0o111 ? now.mode | ((now.mode & 0o444) >> 2) : now.mode & ~0o111;
      if (!now.bytes.equals(f.content) || mode !== now.mode)
        step = { ...base, kind: 'replace', content: f.content, mode, baseline: now };
    } else if (now) step = { ...base, kind: 'remove', baseline: now };
    else if (f.content)
      step = { ...base, kind: 'create', content: f.content, mode: f.mode, missingDirs: missingDirs(t) };
    if (!step) return;
    plan.steps.push(step);
    plan.affected.push({ path: t.rel, operation: !now ? 'add' : !f.content ? 'delete' : 'update' });
  });
  return plan;
}

function changedSince(rel: string): ToolError {
  return new ToolError(
    'PATCH_CONFLICT',
    `${rel} changed while the revert was being prepared; nothing was written`,
    { path: rel, reason: 'changed_since_review' },
    {
      suggestion:
        'Call show_changes to see (and review) what changed, then revert again if the change should go too.',
    },
  );
}
