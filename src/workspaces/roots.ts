// The project roots (--projects, SERVICE_PROJECTS) and the one rule for a path open_workspace may open
// (docs/tools.md#several-workspaces): absolute, `~`-prefixed or relative to a project root, it must resolve
// (symlinks included) to a directory strictly inside a root — never the root itself, so never the home
// directory unless that lies strictly inside a root. The path is resolved, checked, then opened as a directory and its
// real path read back from the descriptor, so a component swapped for a symlink between the check and the
// open is refused (the `workspace.resolved` pause point sits between the two).
import { closeSync, constants, fstatSync, lstatSync, openSync, readlinkSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { pausePoint } from '../core/pause.js';
import { ToolError } from '../core/tool-error.js';

export interface ProjectRoot {
  /** As configured (absolute). */
  readonly lexical: string;
  /** Its real path. */
  readonly real: string;
}

/** The configured roots with their real paths; one that no longer resolves is left out. */
export function projectRoots(configured: readonly string[]): ProjectRoot[] {
  const out: ProjectRoot[] = [];
  for (const lexical of configured) {
    try {
      out.push({ lexical, real: realpathSync(lexical) });
    } catch {
      /* vanished since the start: nothing can be opened under it */
    }
  }
  return out;
}

/** `child` lies strictly below `parent` (both real, absolute). */
export function strictlyInside(parent: string, child: string): boolean {
  const rel = path.relative(parent, child);
  return rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel);
}

function outside(input: string, roots: readonly ProjectRoot[], why: string): ToolError {
  const names = roots.map((r) => r.lexical);
  return new ToolError(
    'WORKSPACE_OUTSIDE_ROOTS',
    `${JSON.stringify(input)} ${why}; workspaces must be directories strictly inside a project root (${names.join(', ')})`,
    { path: input, roots: names },
    {
      suggestion: `Name a project directory inside ${names[0] ?? 'a project root'}, e.g. open_workspace {"path": "my-project"}.`,
    },
  );
}

/** The lexical candidates for `input`: itself when absolute, under HOME for `~`, under each root otherwise. */
function candidates(input: string, roots: readonly ProjectRoot[], home: string | undefined): string[] {
  if (input === '~' || input.startsWith('~/')) return home ? [path.join(home, input.slice(1))] : [];
  if (path.isAbsolute(input)) return [path.resolve(input)];
  return roots.map((r) => path.resolve(r.lexical, input));
}

function realOf(p: string): string | undefined {
  try {
    return realpathSync(p);
  } catch {
    return undefined;
  }
}

/**
 * The real path of the directory `input` names, checked against the roots as the header says, or a ToolError
 * (WORKSPACE_OUTSIDE_ROOTS for a path that leaves them, NOT_FOUND / NOT_A_DIRECTORY otherwise).
 */
export function resolveWorkspacePath(
  input: string,
  roots: readonly ProjectRoot[],
  home: string | undefined,
): string {
  if (input.includes('\0')) throw outside(input, roots, 'is not a path');
  const found = candidates(input, roots, home)
    .map(realOf)
    .filter((r) => r !== undefined);
  if (found.length === 0)
    throw new ToolError(
      'NOT_FOUND',
      `${JSON.stringify(input)} does not exist`,
      { path: input },
      { suggestion: 'Name an existing project directory: absolute, `~/…`, or relative to a project root.' },
    );
  const real = found[0] as string;
  const root = roots.find((r) => strictlyInside(r.real, real));
  if (!root) {
    const isRoot = roots.some((r) => r.real === real);
    throw outside(input, roots, isRoot ? 'is a project root itself' : 'resolves outside every project root');
  }
  return checkedOpen(input, real, roots);
}

/** Opens `real` as a directory and reads its path back from the descriptor: a swap since the check is refused. */
function checkedOpen(input: string, real: string, roots: readonly ProjectRoot[]): string {
  pausePoint('workspace.resolved');
  let fd: number;
  try {
    fd = openSync(real, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    // O_NOFOLLOW|O_DIRECTORY on a symlink fails with ENOTDIR: a directory swapped since the check.
    if (code === 'ENOTDIR' && !isSymlink(real))
      throw new ToolError(
        'NOT_A_DIRECTORY',
        `${JSON.stringify(input)} is not a directory`,
        { path: input },
        { suggestion: 'Name the project directory that contains it.' },
      );
    throw outside(input, roots, `changed while it was opened (${code ?? 'error'})`);
  }
  try {
    if (!fstatSync(fd).isDirectory()) throw outside(input, roots, 'is not a directory');
    const now = readlinkSync(`/proc/self/fd/${fd}`);
    if (now !== real || !roots.some((r) => strictlyInside(r.real, now)))
      throw outside(input, roots, 'changed while it was opened');
    return now;
  } finally {
    closeSync(fd);
  }
}

function isSymlink(p: string): boolean {
  try {
    return lstatSync(p).isSymbolicLink();
  } catch {
    return false;
  }
}
