// apply_patch end to end, below the tool layer: parse → resolve paths → take the per-file locks → read and
// match everything → commit (or stop, for a dry run) → release. Knows nothing of MCP; the tool file shapes
// the result. Parse failures become INVALID_ARGUMENT with details.line (the patch text is the bad argument),
// and so does a patch over MAX_PATCH_BYTES (docs/tools.md#limits).
import path from 'node:path';
import { yieldToLoop } from '../core/slice.js';
import { ToolError } from '../core/tool-error.js';
import type { Logger } from '../core/log.js';
import { isInside, toPosixRel, type WorkspaceRoot } from '../workspace/paths.js';
import { pathErrorToTool, PathRaceError } from '../workspace/confined-fs.js';
import { commitSteps, type CommitHooks, type CommitStep } from './commit.js';
import type { Fuzz } from './line-index.js';
import type { FileLocks } from './locks.js';
import { parsePatch } from './parser.js';
import { planOps, type AffectedFile, type Plan } from './plan.js';
import { resolveOps } from './targets.js';
import type { PatchFormat } from './types.js';

export interface PatchEnv {
  root: WorkspaceRoot;
  locks: FileLocks;
  log?: Logger;
  /**
   * Called under the locks, after everything matched and before the first byte is written, with the real
   * path of every file the commit will create, replace or remove (e.g. to remember originals for git_diff).
   */
  beforeWrite?: (files: string[]) => void;
  /** Called after a commit with its steps (the console's edit journal, patch/journal.ts). */
  committed?: (steps: readonly CommitStep[]) => void;
}

export interface ApplyOptions {
  dryRun?: boolean;
  /** Test-only seams passed to the committer. */
  hooks?: CommitHooks;
}

export interface PatchOutcome {
  affected: AffectedFile[];
  additions: number;
  removals: number;
  fuzz: Fuzz;
  format: PatchFormat;
  dryRun: boolean;
}

/** The largest patch one call takes: far beyond any hand-written change, small enough to match promptly. */
export const MAX_PATCH_BYTES = 1024 * 1024;
const MIB = 1024 * 1024;

function tooLarge(bytes: number): ToolError {
  return new ToolError(
    'INVALID_ARGUMENT',
    `the patch is ${(bytes / MIB).toFixed(1)} MiB (${bytes} bytes); one apply_patch call takes at most ` +
      `${MAX_PATCH_BYTES / MIB} MiB (${MAX_PATCH_BYTES} bytes)`,
    { argument: 'patch', bytes, max_bytes: MAX_PATCH_BYTES },
    {
      suggestion:
        'Split the patch into several apply_patch calls (e.g. a few files or a few hundred hunks each) and send ' +
        'them one after another; to replace a generated file wholesale, write it with exec_command.',
    },
  );
}

const FORMAT_REMINDER =
  'Format: "*** Begin Patch", then per file "*** Update File: PATH" with "@@ <line above the change>" and lines ' +
  'starting with " " (unchanged), "-" (removed) or "+" (added); "*** Add File: PATH" with "+" lines; ' +
  '"*** Delete File: PATH"; then "*** End Patch".';

export async function applyPatch(
  env: PatchEnv,
  text: string,
  opts: ApplyOptions = {},
): Promise<PatchOutcome> {
  if (text.length > MAX_PATCH_BYTES / 3) {
    const bytes = Buffer.byteLength(text);
    if (bytes > MAX_PATCH_BYTES) throw tooLarge(bytes);
  }
  const parsed = parsePatch(text);
  if (!parsed.ok) {
    throw new ToolError(
      'INVALID_ARGUMENT',
      `patch line ${parsed.line}: ${parsed.message}`,
      { line: parsed.line, reason: 'parse' },
      {
        suggestion: `Fix the patch at line ${parsed.line} and send the whole patch again. ${FORMAT_REMINDER}`,
      },
    );
  }
  await yieldToLoop(); // parsing a patch near the limit takes tens of milliseconds: let others in
  const ops = await beforeWritingAsync(env.root, () => resolveOps(env.root, parsed.ops));
  const keys = ops.flatMap((op) => (op.dest ? [op.target.file, op.dest.file] : [op.target.file]));
  const plan = await commitPlan(env, keys, () => planOps(ops), opts);
  return {
    affected: plan.affected,
    additions: plan.additions,
    removals: plan.removals,
    fuzz: plan.fuzz,
    format: parsed.format,
    dryRun: !!opts.dryRun,
  };
}

/**
 * How every file-writing tool writes (apply_patch, edit_file): take the per-file locks of `keys` (real paths),
 * make the plan under them (it reads and matches; nothing is written yet, so what it read is the baseline the
 * committer rechecks), then, unless this is a dry run, report the files to `beforeWrite` and commit atomically.
 */
export async function commitPlan<P extends Plan>(
  env: PatchEnv,
  keys: readonly string[],
  makePlan: () => P | Promise<P>,
  opts: ApplyOptions = {},
): Promise<P> {
  return env.locks.withLocks(keys, async () => {
    const plan = await beforeWritingAsync(env.root, makePlan);
    if (!opts.dryRun) {
      env.beforeWrite?.(plan.steps.map((st) => path.join(st.dir, st.name)));
      await commitSteps(plan.steps, { root: env.root.real, hooks: opts.hooks, log: env.log });
      env.committed?.(plan.steps);
    }
    return plan;
  });
}

/**
 * Resolving and reading happen before anything is written: a file-system refusal there (EACCES, ENAMETOOLONG,
 * a directory swapped for a symlink…) is a specific error, never INTERNAL_ERROR
 * (docs/design-notes.md#patch-failures: PATCH_FAILED with the errno; a symlink race or loop: SYMLINK_ESCAPE).
 */
export function beforeWriting<T>(root: WorkspaceRoot, step: () => T): T {
  try {
    return step();
  } catch (e) {
    throw refusalBeforeWriting(root, e);
  }
}

/** beforeWriting for a step that may wait (matching yields to the event loop). */
export async function beforeWritingAsync<T>(root: WorkspaceRoot, step: () => T | Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (e) {
    throw refusalBeforeWriting(root, e);
  }
}

function refusalBeforeWriting(root: WorkspaceRoot, e: unknown): unknown {
  if (e instanceof ToolError) return e;
  const err = e as NodeJS.ErrnoException;
  const where = typeof err?.path === 'string' ? relOf(root, err.path) : undefined;
  const rel = where ?? (e instanceof PathRaceError ? relOf(root, e.file) : undefined) ?? '';
  if (e instanceof PathRaceError || err?.code === 'ELOOP') return pathErrorToTool(e, rel) ?? e;
  if (typeof err?.code !== 'string' || !/^E[A-Z]+$/.test(err.code)) return e;
  return new ToolError(
    'PATCH_FAILED',
    `${rel || 'a path of the patch'}: ${err.code} (${err.syscall ?? 'file system'}); nothing was written`,
    { path: rel || undefined, errno: err.code, syscall: err.syscall },
    {
      suggestion:
        err.code === 'ENAMETOOLONG'
          ? 'Use shorter file names (most file systems allow 255 bytes per name).'
          : 'The file system refuses this path; patch another path or tell the user.',
    },
  );
}

function relOf(root: WorkspaceRoot, p: string): string | undefined {
  for (const base of [root.lexical, root.real]) if (isInside(base, p)) return toPosixRel(base, p);
  return undefined;
}
