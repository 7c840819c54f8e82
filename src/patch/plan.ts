// Turns resolved operations into commit steps, reading and matching everything before anything is written
// (docs/tools.md#editing-files): existence rules (Add on an existing file, Update/Delete of a missing one,
// Delete of a directory, Move onto a file → PATCH_FAILED), text decoding, hunk placement, new bytes and
// modes. Runs under the per-file locks, so what it reads is what the committer's baseline check compares
// against.
import { TimeSlicer, yieldToLoop } from '../core/slice.js';
import { ToolError, type ToolErrorCode } from '../core/tool-error.js';
import type { Baseline, CommitStep } from './commit.js';
import { probe, readSnapshot, type Snapshot } from './fs-safe.js';
import type { Fuzz } from './line-index.js';
import { placeHunks, renderPlacements, type MatchFailure } from './matcher.js';
import { missingDirs, type ResolvedOp, type Target } from './targets.js';
import { decodeDoc, encodeNewFile, type TextDoc } from './text-doc.js';
import { decodeForWrite } from './decode.js';
import type { AddOp, Hunk } from './types.js';

/** Files larger than this are not patched (a patch engine holding several copies in memory). */
export const MAX_PATCH_FILE_BYTES = 64 * 1024 * 1024;
export const NEW_FILE_MODE = 0o644;

export type Operation = 'add' | 'update' | 'delete' | 'move';

export interface AffectedFile {
  path: string;
  operation: Operation;
  old_path?: string;
}

export interface Plan {
  steps: CommitStep[];
  affected: AffectedFile[];
  additions: number;
  removals: number;
  fuzz: Fuzz;
}

/** Matching yields to the event loop (one slicer for the whole patch: matcher.ts). */
export async function planOps(ops: readonly ResolvedOp[]): Promise<Plan> {
  const plan: Plan = { steps: [], affected: [], additions: 0, removals: 0, fuzz: 0 };
  const slicer = new TimeSlicer();
  for (const op of ops) {
    await slicer.tick();
    if (op.kind === 'add') planAdd(plan, op, op.target);
    else if (op.kind === 'delete') planDelete(plan, op.target);
    else await planUpdate(plan, op.hunks, op.target, op.dest, slicer);
  }
  return plan;
}

function planAdd(plan: Plan, op: AddOp, t: Target): void {
  const content = encodeNewFile(op.lines, op.noEol);
  const p = probe(t.file);
  if (p.kind !== 'missing') {
    const what =
      p.kind === 'file'
        ? 'a file'
        : p.kind === 'dir'
          ? 'a directory'
          : p.kind === 'symlink'
            ? 'a symbolic link'
            : 'a special file';
    throw failed(t, `cannot add ${t.rel}: ${what} already exists there`, 'exists', {
      suggestion:
        p.kind === 'file'
          ? `To change it, use "*** Update File: ${t.rel}" with hunks; to replace it entirely, delete it in one patch and add it in the next. Read it first: ${callText('read_file', { path: t.rel })}`
          : 'Choose another path.',
    });
  }
  plan.steps.push({
    kind: 'create',
    rel: t.rel,
    dir: t.dir,
    name: t.name,
    content,
    mode: NEW_FILE_MODE,
    missingDirs: missingDirs(t),
  });
  plan.affected.push({ path: t.rel, operation: 'add' });
  plan.additions += op.lines.length;
}

function planDelete(plan: Plan, t: Target): void {
  const snap = readExisting(t, 'delete');
  plan.steps.push({ kind: 'remove', rel: t.rel, dir: t.dir, name: t.name, baseline: baselineOf(snap) });
  plan.affected.push({ path: t.rel, operation: 'delete' });
  const d = decodeDoc(snap.buf);
  if (d.ok) plan.removals += d.doc.lines.length;
}

async function planUpdate(
  plan: Plan,
  hunks: readonly Hunk[],
  t: Target,
  dest: Target | undefined,
  slicer: TimeSlicer,
): Promise<void> {
  const snap = readExisting(t, dest ? 'move' : 'update');
  const content = hunks.length > 0 ? await applyHunks(plan, hunks, t, snap.buf, slicer) : snap.buf;
  if (dest) return planMove(plan, t, dest, snap, content);
  if (!content.equals(snap.buf)) {
    plan.steps.push({
      kind: 'replace',
      rel: t.rel,
      dir: t.dir,
      name: t.name,
      content,
      mode: snap.mode,
      baseline: baselineOf(snap),
    });
  }
  plan.affected.push({ path: t.rel, operation: 'update' });
}

/** The file's new content with the hunks placed; counts the lines added and removed. */
async function applyHunks(
  plan: Plan,
  hunks: readonly Hunk[],
  t: Target,
  buf: Buffer,
  slicer: TimeSlicer,
): Promise<Buffer> {
  const doc = decodeText(t, buf);
  const m = await placeHunks(doc, hunks, slicer);
  if (!m.ok) throw matchError(t, m.failure);
  await yieldToLoop(); // rendering 10,000 placements is tens of milliseconds of its own
  const content = renderPlacements(doc, m.placements);
  if (m.fuzz > plan.fuzz) plan.fuzz = m.fuzz;
  for (const h of hunks) {
    for (const l of h.lines) {
      if (l.kind === '+') plan.additions++;
      else if (l.kind === '-') plan.removals++;
    }
  }
  return content;
}

function planMove(plan: Plan, t: Target, dest: Target, snap: Snapshot, content: Buffer): void {
  const p = probe(dest.file);
  if (p.kind !== 'missing') {
    throw failed(
      dest,
      `cannot move ${t.rel} to ${dest.rel}: ${dest.rel} already exists`,
      'destination_exists',
      {
        suggestion: 'Move to a path that does not exist yet, or delete the destination in an earlier patch.',
      },
    );
  }
  plan.steps.push({
    kind: 'create',
    rel: dest.rel,
    dir: dest.dir,
    name: dest.name,
    content,
    mode: snap.mode,
    missingDirs: missingDirs(dest),
  });
  plan.steps.push({ kind: 'remove', rel: t.rel, dir: t.dir, name: t.name, baseline: baselineOf(snap) });
  plan.affected.push({ path: dest.rel, operation: 'move', old_path: t.rel });
}

/** How a next call is spelled for the model (the same form tools/result uses; patch/ must not import tools/). */
function callText(tool: string, args: Record<string, unknown>): string {
  return `${tool} ${JSON.stringify(args)}`;
}

function baselineOf(s: Snapshot): Baseline {
  return { bytes: s.buf, mode: s.mode };
}

function readExisting(t: Target, verb: 'update' | 'delete' | 'move'): Snapshot {
  const p = probe(t.file);
  if (p.kind === 'missing') {
    throw failed(t, `cannot ${verb} ${t.rel}: it does not exist`, 'missing', {
      suggestion: `Check the path (list_files {"patterns":["**/${t.name}"]}); to create a new file use "*** Add File: ${t.rel}".`,
    });
  }
  if (p.kind === 'dir') {
    throw failed(t, `cannot ${verb} ${t.rel}: it is a directory`, 'is_directory', {
      suggestion: 'apply_patch changes files; name a file path.',
    });
  }
  if (p.kind === 'symlink') {
    throw failed(
      t,
      `cannot ${verb} ${t.rel}: it is a symbolic link (to ${p.target}); patches never write through symlinks`,
      'symlink',
      {
        suggestion: 'Patch the file the link points to, by its own path.',
      },
    );
  }
  if (p.kind === 'other')
    throw failed(t, `cannot ${verb} ${t.rel}: it is not a regular file`, 'not_regular_file', {});
  if (p.stat.size > MAX_PATCH_FILE_BYTES) {
    throw failed(
      t,
      `cannot ${verb} ${t.rel}: it is ${p.stat.size} bytes, over the ${MAX_PATCH_FILE_BYTES}-byte limit for patching`,
      'too_large',
      {
        suggestion: 'Change it with exec_command (e.g. sed) instead.',
      },
    );
  }
  return readSnapshot(t.file);
}

function decodeText(t: Target, buf: Buffer): TextDoc {
  return decodeForWrite(buf, { rel: t.rel, verb: 'patch', tool: 'apply_patch', line: t.line });
}

function failed(t: Target, message: string, reason: string, hints: { suggestion?: string }): ToolError {
  return new ToolError(
    'PATCH_FAILED',
    `patch line ${t.line}: ${message}`,
    { path: t.rel, line: t.line, reason },
    hints,
  );
}

const MATCH_SUGGESTIONS: Record<MatchFailure['code'], string> = {
  PATCH_CONTEXT_NOT_FOUND:
    'Re-read the file and rebuild the hunk from its current text: context (" ") and removed ("-") lines must equal lines of the file, in order.',
  PATCH_CONTEXT_AMBIGUOUS:
    'Add an "@@ <a unique line above the change, e.g. the function signature>" line before the hunk, or more context lines.',
  PATCH_HUNKS_OVERLAP: 'Merge the overlapping hunks into one hunk, or send them in two apply_patch calls.',
  PATCH_ALREADY_APPLIED:
    'Check the file: if the change is already there, skip this hunk; otherwise rebuild the hunk from the current text.',
};

function matchError(t: Target, f: MatchFailure): ToolError {
  const retry = f.reread
    ? callText('read_file', { path: t.rel, start_line: f.reread.start_line, end_line: f.reread.end_line })
    : f.code === 'PATCH_ALREADY_APPLIED' || f.code === 'PATCH_CONTEXT_NOT_FOUND'
      ? callText('read_file', { path: t.rel })
      : undefined;
  return new ToolError(
    f.code as ToolErrorCode,
    `${t.rel}: ${f.message}`,
    { path: t.rel, line: f.line, ...f.details },
    {
      retry,
      suggestion: MATCH_SUGGESTIONS[f.code],
    },
  );
}
