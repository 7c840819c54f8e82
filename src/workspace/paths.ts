// Path confinement for every path argument (docs/tools.md#paths). A path is resolved against the root,
// `..` is resolved first and then checked, and the *real* path of the target (or of its nearest existing
// parent, for files that do not exist yet) must lie inside the real root. Lexically inside but really
// outside means a symlink leads out: SYMLINK_ESCAPE. Nothing here reads or writes file contents.
import { realpathSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { pausePoint } from '../core/pause.js';
import { ToolError } from '../core/tool-error.js';

export interface WorkspaceRoot {
  /** As configured, absolute and normalised. */
  readonly lexical: string;
  /** realpath of the root. */
  readonly real: string;
}

export interface ResolvedPath {
  /** Absolute path (lexical, inside the root). */
  abs: string;
  /** Real path of the target, or of the nearest existing parent joined with the missing rest. */
  real: string;
  /** Relative to the root, with `/` separators; `.` for the root itself. */
  rel: string;
  exists: boolean;
}

export type RootCheck = { ok: true; root: WorkspaceRoot } | { ok: false; reason: string };

/** Validates a workspace root: an existing directory that is neither `/` nor the user's home directory. */
export function checkRoot(dir: string, home: string = homedir()): RootCheck {
  const lexical = path.resolve(dir);
  let real: string;
  try {
    real = realpathSync(lexical);
  } catch {
    return { ok: false, reason: `workspace ${lexical} does not exist` };
  }
  if (!statSync(real).isDirectory()) return { ok: false, reason: `workspace ${lexical} is not a directory` };
  if (real === '/') return { ok: false, reason: 'workspace must not be the filesystem root /' };
  const realHome = safeReal(home);
  if (realHome && real === realHome) {
    return {
      ok: false,
      reason: `workspace must not be the home directory ${home}; serve a project directory`,
    };
  }
  return { ok: true, root: { lexical, real } };
}

function safeReal(p: string): string | undefined {
  try {
    return realpathSync(p);
  } catch {
    return undefined;
  }
}

export function isInside(parent: string, child: string): boolean {
  if (child === parent) return true;
  const withSep = parent.endsWith(path.sep) ? parent : parent + path.sep;
  return child.startsWith(withSep);
}

export function toPosixRel(root: string, abs: string): string {
  const rel = path.relative(root, abs);
  if (rel === '') return '.';
  return path.sep === '/' ? rel : rel.split(path.sep).join('/');
}

/** Real path of `abs`, or of its nearest existing ancestor joined with the rest. */
function realOrNearest(abs: string): { real: string; exists: boolean } {
  try {
    return { real: realpathSync.native(abs), exists: true };
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT' && code !== 'ENOTDIR') throw err;
  }
  const rest: string[] = [];
  let cur = abs;
  for (;;) {
    const parent = path.dirname(cur);
    rest.unshift(path.basename(cur));
    if (parent === cur) return { real: abs, exists: false };
    cur = parent;
    try {
      return { real: path.join(realpathSync.native(cur), ...rest), exists: false };
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw err;
    }
  }
}

/** NAME_MAX of every common file system (ext4, xfs, btrfs, tmpfs, APFS), and Linux's PATH_MAX. */
const NAME_MAX_BYTES = 255;
const PATH_MAX_BYTES = 4096;

function nameTooLong(input: string): ToolError {
  const shown = input.length > 200 ? `${input.slice(0, 200)}…` : input;
  return errnoToTool(Object.assign(new Error('ENAMETOOLONG'), { code: 'ENAMETOOLONG' }), shown) as ToolError;
}

export function resolvePath(root: WorkspaceRoot, input: unknown, argName = 'path'): ResolvedPath {
  checkPathText(input, argName);
  const abs = lexicalPath(root, input);
  // No file system opens a path of PATH_MAX bytes or more; and finding the nearest existing parent of one
  // walks up a component at a time, which took minutes for a 600 KB path of 300,000 components.
  if (abs.length >= PATH_MAX_BYTES / 4 && Buffer.byteLength(abs) >= PATH_MAX_BYTES) throw nameTooLong(input);
  let found: { real: string; exists: boolean };
  try {
    found = realOrNearest(abs);
  } catch (e) {
    throw errnoToTool(e, input) ?? e;
  }
  const { real, exists } = found;
  if (!isInside(root.real, real)) {
    throw new ToolError(
      'SYMLINK_ESCAPE',
      `${JSON.stringify(input)} goes through a symlink that leads outside the workspace`,
      { path: input },
      { suggestion: 'Symlinks out of the workspace are not followed; use a path whose target is inside it.' },
    );
  }
  pausePoint('path.resolved');
  return { abs, real, rel: toPosixRel(root.lexical, abs), exists };
}

/** The argument as text alone: a non-empty string, no NUL, valid Unicode, no name over NAME_MAX. */
function checkPathText(input: unknown, argName: string): asserts input is string {
  if (typeof input !== 'string' || input.length === 0) {
    throw new ToolError(
      'INVALID_ARGUMENT',
      `${argName} must be a non-empty string`,
      { argument: argName },
      {
        suggestion: `Pass a path relative to the workspace root, e.g. "src/index.ts", or "." for the root.`,
      },
    );
  }
  if (input.includes('\0')) {
    throw new ToolError(
      'INVALID_ARGUMENT',
      `${argName} contains a NUL byte`,
      { argument: argName },
      {
        suggestion: 'Remove the NUL character from the path.',
      },
    );
  }
  // A lone surrogate has no UTF-8 form: the file system would get U+FFFD instead, a name other than the one
  // asked for and reported (and two different paths would name one file).
  if (/\p{Cs}/u.test(input)) {
    throw new ToolError(
      'INVALID_ARGUMENT',
      `${argName} is not valid Unicode (it contains a lone surrogate)`,
      { argument: argName },
      { suggestion: 'Send the path as valid UTF-8 text.' },
    );
  }
  // A name longer than any file system allows (255 bytes) is refused up front, as the kernel would refuse it
  // once its parent exists: otherwise a missing parent hides it, and apply_patch's dry_run passed a patch that
  // could never be written.
  if (input.split('/').some((c) => c.length > NAME_MAX_BYTES / 4 && Buffer.byteLength(c) > NAME_MAX_BYTES))
    throw nameTooLong(input);
}

/** The absolute lexical path `input` names, which must lie inside the workspace. */
function lexicalPath(root: WorkspaceRoot, input: string): string {
  let abs: string;
  if (path.isAbsolute(input)) {
    abs = path.resolve(input);
    // A model may send the absolute path in either spelling of the root (through a symlinked parent or not).
    if (!isInside(root.lexical, abs) && isInside(root.real, abs)) {
      abs = path.join(root.lexical, path.relative(root.real, abs));
    }
  } else {
    abs = path.resolve(root.lexical, input);
  }
  if (!isInside(root.lexical, abs)) {
    throw new ToolError(
      'PATH_OUTSIDE_WORKSPACE',
      `${JSON.stringify(input)} resolves outside the workspace`,
      { path: input, workspace: root.lexical },
      { suggestion: 'Use a path inside the workspace, relative to its root (e.g. "src/main.ts").' },
    );
  }
  return abs;
}

export function notFound(rel: string, what = 'file or directory'): ToolError {
  return new ToolError(
    'NOT_FOUND',
    `${what} not found: ${rel}`,
    { path: rel },
    {
      suggestion:
        'Check the spelling; list_files {"patterns": ["**/NAME*"]} or list_dir {"path": "."} shows what exists.',
    },
  );
}

const ERRNO_TOOL: Record<string, { code: 'INVALID_ARGUMENT' | 'SYMLINK_ESCAPE' | 'NOT_FOUND'; why: string }> =
  {
    ENAMETOOLONG: { code: 'INVALID_ARGUMENT', why: 'a name in the path is too long for the file system' },
    ELOOP: {
      code: 'SYMLINK_ESCAPE',
      why: 'the path goes through a symlink loop, or a symlink where none is allowed',
    },
    EACCES: { code: 'INVALID_ARGUMENT', why: 'permission denied by the file system' },
    EPERM: { code: 'INVALID_ARGUMENT', why: 'operation not permitted by the file system' },
    ENOENT: { code: 'NOT_FOUND', why: 'it does not exist' },
    ENOTDIR: { code: 'NOT_FOUND', why: 'a parent in the path is a file, not a directory' },
    ENXIO: {
      code: 'INVALID_ARGUMENT',
      why: 'it is a unix socket or a device without a driver, not a regular file; only regular files are read',
    },
    ENODEV: {
      code: 'INVALID_ARGUMENT',
      why: 'it is a device without a driver, not a regular file; only regular files are read',
    },
    ENOTREG: {
      code: 'INVALID_ARGUMENT',
      why: 'it is not a regular file (device, socket or pipe); only regular files are read',
    },
  };

/** A specific tool error for an errno a path can cause (ENAMETOOLONG, ELOOP, EACCES…), else undefined. */
export function errnoToTool(e: unknown, rel: string): ToolError | undefined {
  const code = (e as NodeJS.ErrnoException)?.code;
  const hit = code ? ERRNO_TOOL[code] : undefined;
  if (!hit) return undefined;
  const suggestion =
    hit.code === 'NOT_FOUND'
      ? 'Check the path with list_dir {"path": "."}.'
      : code === 'ENAMETOOLONG'
        ? 'Use shorter names (most file systems allow 255 bytes per name).'
        : 'This path cannot be used as it is; use another path inside the workspace.';
  return new ToolError(hit.code, `${rel}: ${hit.why} (${code})`, { path: rel, errno: code }, { suggestion });
}
