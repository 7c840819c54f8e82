// Where each operation of a patch writes: every path goes through workspace/paths.resolvePath (confinement,
// symlink escapes), then becomes (real parent directory, file name), so later writes never traverse a link.
// Also owns the per-path checks that need no file contents: duplicates, the directories an Add must create.
import { lstatSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { TimeSlicer } from '../core/slice.js';
import { ToolError } from '../core/tool-error.js';
import { isInside, resolvePath, type WorkspaceRoot } from '../workspace/paths.js';
import type { PatchOp, UpdateOp } from './types.js';

export interface Target {
  /** Workspace-relative, `/`-separated, for messages and results. */
  rel: string;
  /** Real path of the parent directory (for a new file: where it will be, possibly not yet existing). */
  dir: string;
  name: string;
  /** `dir/name`: never a path through a symlink we know of. */
  file: string;
  /** Patch line that named this path (0 when a tool argument named it). */
  line: number;
}

export type ResolvedOp = PatchOp & { target: Target; dest?: Target };

/** Resolves every operation's paths, yielding to the event loop as it goes (a patch may name thousands). */
export async function resolveOps(
  root: WorkspaceRoot,
  ops: readonly PatchOp[],
  slicer = new TimeSlicer(),
): Promise<ResolvedOp[]> {
  const merged = mergeUpdates(ops);
  const out: ResolvedOp[] = [];
  const seen = new Map<string, number>();
  const claim = (t: Target) => {
    const prev = seen.get(t.file);
    if (prev !== undefined) {
      throw new ToolError(
        'INVALID_ARGUMENT',
        `patch line ${t.line}: ${t.rel} is already changed by the operation at patch line ${prev}`,
        { line: t.line, path: t.rel, first_line: prev },
        {
          suggestion:
            'Each file may appear in one operation: put all hunks of a file under one "*** Update File:" and do not add, delete or move it again.',
        },
      );
    }
    seen.set(t.file, t.line);
  };
  for (const op of merged) {
    await slicer.tick();
    const target = resolveTarget(root, op.path, op.line);
    let dest: Target | undefined;
    if (op.kind === 'update' && op.moveTo !== undefined) {
      dest = resolveTarget(root, op.moveTo, op.moveLine ?? op.line);
      if (dest.file === target.file) dest = undefined;
    }
    claim(target);
    if (dest) claim(dest);
    out.push({ ...op, target, dest });
  }
  return out;
}

/** Two `*** Update File:` sections for one path (and no move) are read as one, hunks in order. */
function mergeUpdates(ops: readonly PatchOp[]): PatchOp[] {
  const out: PatchOp[] = [];
  const byPath = new Map<string, UpdateOp>();
  for (const op of ops) {
    const prev = op.kind === 'update' && op.moveTo === undefined ? byPath.get(op.path) : undefined;
    if (prev && op.kind === 'update') {
      prev.hunks = [...prev.hunks, ...op.hunks];
      continue;
    }
    const copy = op.kind === 'update' ? { ...op, hunks: [...op.hunks] } : op;
    if (copy.kind === 'update' && copy.moveTo === undefined) byPath.set(copy.path, copy);
    out.push(copy);
  }
  return out;
}

export function resolveTarget(root: WorkspaceRoot, input: string, line: number): Target {
  return locate(root, input, { line, tool: 'apply_patch' });
}

/**
 * The same checks for a file a tool names in its own argument (edit_file): messages without a patch line, and
 * `line` 0 in the target.
 */
export function resolveFileTarget(root: WorkspaceRoot, input: string, tool: string): Target {
  return locate(root, input, { tool });
}

interface Origin {
  /** Patch line that named the path; absent when a tool argument did. */
  line?: number;
  tool: string;
}

/** `patch line N: ` before a message about a path a patch named; nothing for a tool argument. */
function where(o: Origin): string {
  return o.line === undefined ? '' : `patch line ${o.line}: `;
}

function locate(root: WorkspaceRoot, input: string, o: Origin): Target {
  const { line } = o;
  let r;
  try {
    r = resolvePath(root, input, 'path');
  } catch (e) {
    if (e instanceof ToolError && line !== undefined)
      throw new ToolError(e.code, `${where(o)}${e.message}`, { ...e.details, line }, e.hints);
    throw e;
  }
  if (r.rel === '.') {
    throw new ToolError(
      'INVALID_ARGUMENT',
      `${where(o)}${JSON.stringify(input)} names the workspace root, not a file`,
      { line, path: input },
      {
        suggestion: 'Name a file path relative to the workspace root, e.g. "src/main.ts".',
      },
    );
  }
  refuseGitInternals(r.rel, o);
  // realpath of the parent, plus the name as written: a symlink in the last component stays visible.
  const dir = r.exists ? realpathSync.native(path.dirname(r.abs)) : path.dirname(r.real);
  const name = r.exists ? path.basename(r.abs) : path.basename(r.real);
  if (!isInside(root.real, dir)) {
    throw new ToolError('SYMLINK_ESCAPE', `${where(o)}${JSON.stringify(input)} leads outside the workspace`, {
      line,
      path: input,
    });
  }
  refuseGitInternals(path.relative(root.real, path.join(dir, name)).split(path.sep).join('/'), o);
  return { rel: r.rel, dir, name, file: path.join(dir, name), line: line ?? 0 };
}

/**
 * Nothing inside a `.git` directory is written: a hook or config written there would run code the next time the
 * user (or git_* with another client) runs git, which would turn a file-writing tool into code execution.
 */
function refuseGitInternals(rel: string, o: Origin): void {
  if (!rel.split('/').some((c) => c.toLowerCase() === '.git')) return;
  throw new ToolError(
    'PATCH_FAILED',
    `${where(o)}${rel} is inside a .git directory; ${o.tool} does not write git's own files`,
    { line: o.line, path: rel, reason: 'git_internal' },
    {
      suggestion:
        'Change the work tree only; to change git state run git through exec_command, where the command policy applies.',
    },
  );
}

/** Directories to create (outermost first) so that `dir` exists; refuses when a file is in the way. */
export function missingDirs(t: Target): string[] {
  const missing: string[] = [];
  let cur = t.dir;
  for (;;) {
    let isDir: boolean;
    try {
      isDir = lstatSync(cur).isDirectory();
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
      missing.unshift(cur);
      const parent = path.dirname(cur);
      if (parent === cur) break;
      cur = parent;
      continue;
    }
    if (!isDir) {
      throw new ToolError(
        'PATCH_FAILED',
        `${t.line ? `patch line ${t.line}: ` : ''}cannot create ${t.rel}: ${path.basename(cur)} on its path is a file, not a directory`,
        { line: t.line || undefined, path: t.rel, reason: 'parent_not_directory' },
        {
          suggestion: 'Choose a path whose parent directories are directories (list_dir shows what exists).',
        },
      );
    }
    break;
  }
  return missing;
}
