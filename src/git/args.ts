// What a caller may hand to git: revisions and paths, checked before any argv is built (docs/tools.md#git,
// "Paths"). A revision never starts with `-` and holds no control character, so it can never be read as an
// option even by a subcommand without `--end-of-options` (git blame); paths are confined to the workspace and
// passed as literal absolute pathspecs after `--`. Returns values or throws INVALID_ARGUMENT; runs nothing.
// nearestDir finds where to look a path's repository up from.
import { statSync } from 'node:fs';
import path from 'node:path';
import { ToolError } from '../core/tool-error.js';
import { resolvePath, type WorkspaceRoot } from '../workspace/paths.js';

export const MAX_REV_LENGTH = 1024;

// eslint-disable-next-line no-control-regex
const CONTROL = /[\x00-\x1f\x7f]/;

export function validateRev(rev: string, argName: string, tool: string): string {
  if (rev.length === 0) {
    throw new ToolError(
      'INVALID_ARGUMENT',
      `${argName} must not be empty`,
      { argument: argName },
      {
        suggestion: `Pass a revision such as "HEAD", "main", "HEAD~2" or a commit id, or leave ${argName} out.`,
      },
    );
  }
  if (rev.startsWith('-')) {
    throw new ToolError(
      'INVALID_ARGUMENT',
      `${argName} must not start with "-" (it would be read as a git option)`,
      { argument: argName, value: rev.slice(0, 200) },
      {
        suggestion: `${tool} takes a revision (branch, tag, commit id, HEAD~N), not git options.`,
      },
    );
  }
  if (CONTROL.test(rev)) {
    throw new ToolError(
      'INVALID_ARGUMENT',
      `${argName} contains a control character`,
      { argument: argName },
      {
        suggestion: 'Remove newlines, tabs and other control characters from the revision.',
      },
    );
  }
  if (rev.length > MAX_REV_LENGTH) {
    throw new ToolError(
      'INVALID_ARGUMENT',
      `${argName} is longer than ${MAX_REV_LENGTH} characters`,
      { argument: argName },
      {
        suggestion: 'Pass a branch, tag or commit id.',
      },
    );
  }
  return rev;
}

export interface GitPath {
  /** Workspace-relative, `/`-separated (`.` for the root). */
  rel: string;
  /** Absolute path under the real workspace root: what git receives as a literal pathspec. */
  spec: string;
  /** The path exists in the working tree now. */
  exists: boolean;
  /** Real path of the target (a final symlink followed), or of its nearest existing parent joined with the rest. */
  real: string;
}

/** Confines one path argument (it may name a file that exists only in history) and makes its pathspec. */
export function gitPath(root: WorkspaceRoot, input: string, argName: string): GitPath {
  if (CONTROL.test(input)) {
    throw new ToolError(
      'INVALID_ARGUMENT',
      `${argName} contains a control character`,
      { argument: argName },
      {
        suggestion: 'Remove newlines, tabs and other control characters from the path.',
      },
    );
  }
  const r = resolvePath(root, input, argName);
  // The real root joined with the lexical rest: a symlink inside the workspace stays the symlink git tracks.
  return {
    rel: r.rel,
    spec: r.rel === '.' ? root.real : path.join(root.real, r.rel),
    exists: r.exists,
    real: r.real,
  };
}

/**
 * The nearest existing directory at or above `p` (a real path inside the workspace), or `root`: where a
 * repository is looked up for a path that may exist only in history.
 */
export function nearestDir(p: string, root: string): string {
  for (let d = p; ; d = path.dirname(d)) {
    try {
      if (statSync(d).isDirectory()) return d;
    } catch {
      // missing in the working tree: try the parent
    }
    if (d === root || d === path.dirname(d)) return root;
  }
}
