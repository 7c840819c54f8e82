// git/confine: what git may read must lie inside the workspace (docs/design-notes.md#git-hardening,
// docs/security-model.md). Given the work tree, git directory and common directory that discovery reported,
// checks their real paths, the object directory, every alternate object directory (objects/info/alternates,
// recursively, and http-alternates) and every symlink inside the git and common directories; answers the real
// paths git is then pinned to (git/run GitPin) or throws GIT_ERROR naming only workspace-relative locations,
// never outside paths or data.
import { stoodStill } from './settle.js';
import {
  lstatSync,
  readdirSync,
  readFileSync,
  realpathSync,
  statSync,
  type BigIntStats,
  type Dirent,
} from 'node:fs';
import path from 'node:path';
import { ToolError } from '../core/tool-error.js';
import { isInside, toPosixRel } from '../workspace/paths.js';
import type { GitPin } from './run.js';
import { systemClock } from '../core/clock.js';

export interface RepoPaths {
  /** Absolute paths as `git rev-parse --path-format=absolute` printed them. */
  top: string;
  gitDir: string;
  commonDir: string;
}

/** Most entries the symlink walk of the git directories looks at before it refuses (loose objects). */
export const MAX_GIT_DIR_ENTRIES = 100_000;
/** git follows alternates of alternates this deep (its own limit is 5). */
const MAX_ALTERNATE_DEPTH = 6;
/** Never read by a git tool: hooks are off (core.hooksPath=/dev/null) and git-lfs never runs. */
const NOT_READ = new Set(['hooks', 'lfs']);

const SUGGESTION =
  'The git tools only read repositories whose git data lies inside the workspace. Inspect the named location ' +
  'with list_dir or read_file, remove the indirection, or serve the directory that holds the repository.';

function refuse(message: string, location: string, what: string): never {
  throw new ToolError('GIT_ERROR', message, { location, refused: what }, { suggestion: SUGGESTION });
}

/** Real path of `p`, or of its nearest existing ancestor joined with the missing rest. */
function realOrNearest(p: string): string {
  const rest: string[] = [];
  for (let cur = p; ;) {
    try {
      return path.join(realpathSync.native(cur), ...rest);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw e;
    }
    const parent = path.dirname(cur);
    if (parent === cur) return p;
    rest.unshift(path.basename(cur));
    cur = parent;
  }
}

/** git's C-style quoting of an alternates line (`"a\tb"`, octal escapes). */
function unquote(line: string): string {
  if (!line.startsWith('"') || !line.endsWith('"') || line.length < 2) return line;
  const body = line.slice(1, -1);
  const ESC: Record<string, number> = { a: 7, b: 8, f: 12, n: 10, r: 13, t: 9, v: 11, '"': 34, '\\': 92 };
  const out: number[] = [];
  for (let i = 0; i < body.length; i++) {
    const c = body[i] as string;
    if (c !== '\\') {
      out.push(...Buffer.from(c));
      continue;
    }
    const n = body[i + 1] ?? '';
    if (/[0-7]/.test(n)) {
      out.push(parseInt(body.slice(i + 1, i + 4), 8) & 0xff);
      i += 3;
    } else {
      out.push(ESC[n] ?? n.charCodeAt(0));
      i += 1;
    }
  }
  return Buffer.from(out).toString('utf8');
}

function listFile(file: string): string[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return []; // absent (the usual case) or unreadable, which git cannot use either
  }
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'))
    .map(unquote);
}

/** objects/info/alternates (and the alternates' own, as git follows them) and http-alternates. */
function checkAlternates(
  ws: string,
  objectsDir: string,
  depth: number,
  seen: Set<string>,
  shared: readonly string[],
): void {
  if (seen.has(objectsDir) || depth > MAX_ALTERNATE_DEPTH) return;
  seen.add(objectsDir);
  const info = path.join(objectsDir, 'info');
  const where = (name: string) => toPosixRel(ws, path.join(info, name));
  for (const line of listFile(path.join(info, 'http-alternates'))) {
    const outside =
      /^[a-z][a-z0-9+.-]*:/i.test(line) || !isInside(ws, realOrNearest(path.resolve(objectsDir, line)));
    if (outside) {
      refuse(
        `${where('http-alternates')} names an object directory outside the workspace, so the git tools do not read this repository`,
        where('http-alternates'),
        'http_alternates',
      );
    }
  }
  for (const line of listFile(path.join(info, 'alternates'))) {
    const real = realOrNearest(path.resolve(objectsDir, line));
    // A worktree's source object directory (src/workspaces/worktree.ts) is shown read-only to its jail.
    if (shared.includes(real)) continue;
    if (!isInside(ws, real)) {
      refuse(
        `${where('alternates')} names an alternate object directory outside the workspace, so the git tools do not read this repository`,
        where('alternates'),
        'alternates',
      );
    }
    checkAlternates(ws, real, depth + 1, seen, shared);
  }
}

/** What one directory of a git directory holds: the names to descend into and the symlinks to check. */
interface Listing {
  subdirs: string[];
  links: string[];
  count: number;
}

/**
 * Listings of directories without symlinks, reused while the directory's identity, mtime and ctime are the
 * same (an entry added, removed or replaced changes them) and only when both stood still long enough before it
 * was read, since timestamps are coarse (git/settle; ctime cannot be set back). So a
 * repository with thousands of loose objects costs one lstat per directory per call, not a full re-read.
 * Process-wide on purpose: an entry is a fact about the file system (a real path and the signature it was read
 * under, checked on every use), not about one server, so servers in one process (tests) may share it; bounded
 * by MAX_LISTINGS.
 */
const listings = new Map<string, { sig: string; listing: Listing }>();
const MAX_LISTINGS = 20_000;

function listDir(dir: string): Listing | null {
  const started = systemClock.now();
  let st: BigIntStats;
  let entries: Dirent[];
  try {
    st = lstatSync(dir, { bigint: true });
    const sig = `${st.dev}:${st.ino}:${st.mtimeNs}:${st.ctimeNs}`;
    const hit = listings.get(dir);
    if (hit && hit.sig === sig) return hit.listing;
    entries = readdirSync(dir, { withFileTypes: true });
    const listing: Listing = { subdirs: [], links: [], count: entries.length };
    for (const e of entries) {
      if (e.isDirectory()) listing.subdirs.push(e.name);
      else if (e.isSymbolicLink()) listing.links.push(e.name);
    }
    listings.delete(dir);
    if (listing.links.length === 0 && stoodStill(st, started)) {
      listings.set(dir, { sig, listing });
      if (listings.size > MAX_LISTINGS) listings.delete(listings.keys().next().value as string);
    }
    return listing;
  } catch {
    return null; // vanished or unreadable: git cannot read it either
  }
}

/**
 * Every symlink below the git directories must lead inside the workspace (a symlinked `objects/pack` or
 * `refs` reads another repository as surely as alternates do); a symlink to a directory inside is walked too.
 */
function checkSymlinks(ws: string, roots: string[]): void {
  const seen = new Set<string>(roots);
  const stack = roots.map((d) => ({ dir: d, top: true }));
  let count = 0;
  while (stack.length > 0) {
    const { dir, top } = stack.pop()!;
    const listing = listDir(dir);
    if (!listing) continue;
    count += listing.count;
    if (count > MAX_GIT_DIR_ENTRIES) {
      refuse(
        `the git directory holds more than ${MAX_GIT_DIR_ENTRIES} entries, too many to check that none leads outside the workspace; pack loose objects with "git gc" (exec_command) and try again`,
        toPosixRel(ws, roots[0] as string),
        'too_many_entries',
      );
    }
    for (const name of listing.subdirs) {
      if (!(top && NOT_READ.has(name))) stack.push({ dir: path.join(dir, name), top: false });
    }
    for (const name of listing.links) {
      if (top && NOT_READ.has(name)) continue;
      const p = path.join(dir, name);
      const real = realOrNearest(p);
      if (!isInside(ws, real)) {
        const rel = toPosixRel(ws, p);
        refuse(
          `${rel} is a symlink that leads outside the workspace, so the git tools do not read this repository`,
          rel,
          'symlink',
        );
      }
      if (!seen.has(real) && isDir(real)) {
        seen.add(real);
        stack.push({ dir: real, top: false });
      }
    }
  }
}

function isDir(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

/** Checks a discovered repository; answers the real paths to pin git to, or throws GIT_ERROR. */
export function confineRepo(ws: string, found: RepoPaths, shared: readonly string[] = []): GitPin {
  const pin = pinRepo(ws, found);
  walkGitDirs(ws, pin, shared);
  return pin;
}

/** The real paths of a discovered repository, each checked to lie inside the workspace (not yet walked). */
export function pinRepo(ws: string, found: RepoPaths): GitPin {
  const workTree = realOrNearest(found.top);
  if (!isInside(ws, workTree)) {
    // core.worktree can point the work tree anywhere: never list files outside the workspace.
    throw new ToolError(
      'GIT_ERROR',
      'the work tree of this repository lies outside the workspace, so the git tools do not read it',
      { refused: 'work_tree' },
      {
        suggestion:
          'Check core.worktree in .git/config (read_file shows it); the git tools only read work trees inside the workspace.',
      },
    );
  }
  const at = toPosixRel(ws, workTree);
  const gitDir = realOrNearest(found.gitDir);
  if (!isInside(ws, gitDir)) {
    const dotGit = toPosixRel(ws, path.join(workTree, '.git'));
    refuse(
      `the git directory of the repository at ${at} resolves outside the workspace (${dotGit} is a "gitdir:" file or a symlink pointing there), so the git tools do not read it`,
      dotGit,
      'git_dir',
    );
  }
  const commonDir = realOrNearest(found.commonDir);
  if (!isInside(ws, commonDir)) {
    const file = toPosixRel(ws, path.join(gitDir, 'commondir'));
    refuse(
      `the common directory of the repository at ${at} (a linked worktree's ${file}) resolves outside the workspace, so the git tools do not read it`,
      file,
      'common_dir',
    );
  }
  const objectsDir = realOrNearest(path.join(commonDir, 'objects'));
  if (!isInside(ws, objectsDir)) {
    const rel = toPosixRel(ws, path.join(commonDir, 'objects'));
    refuse(
      `${rel} leads outside the workspace, so the git tools do not read this repository`,
      rel,
      'objects',
    );
  }
  return { gitDir, commonDir, objectsDir, workTree };
}

/** The rest of confineRepo: every alternate object directory and every symlink below the git directories. */
export function walkGitDirs(ws: string, pin: GitPin, shared: readonly string[] = []): void {
  checkAlternates(ws, pin.objectsDir, 0, new Set(), shared);
  const { gitDir, commonDir } = pin;
  checkSymlinks(ws, isInside(commonDir, gitDir) ? [commonDir] : [commonDir, gitDir]);
}

/**
 * git in the jail (process/jail/jail.ts) sees only the workspace, so a `.git` leading outside looks like no
 * repository at all. Before saying "not a repository", find the `.git` of `dirReal` or of a directory above it
 * (up to the workspace root) and, when it leads outside, refuse it in the words confineRepo uses.
 */
export function explainUnseen(ws: string, dirReal: string): void {
  for (let dir = dirReal; isInside(ws, dir); dir = path.dirname(dir)) {
    const gitDir = dotGitTarget(dir);
    if (gitDir) {
      const real = realOrNearest(gitDir);
      let commonDir = real;
      if (isInside(ws, real)) {
        const named = listFile(path.join(real, 'commondir'))[0];
        if (named) commonDir = path.resolve(real, named);
      }
      confineRepo(ws, { top: dir, gitDir, commonDir });
      return;
    }
    if (dir === ws) return;
  }
}

/** What `<dir>/.git` names: itself (a directory or a symlink) or the target of its "gitdir:" line. */
function dotGitTarget(dir: string): string | undefined {
  const dotGit = path.join(dir, '.git');
  try {
    const st = lstatSync(dotGit);
    if (st.isSymbolicLink() || st.isDirectory()) return dotGit;
    if (!st.isFile()) return undefined;
    const line = listFile(dotGit).find((l) => l.startsWith('gitdir:'));
    return line ? path.resolve(dir, line.slice('gitdir:'.length).trim()) : undefined;
  } catch {
    return undefined;
  }
}
