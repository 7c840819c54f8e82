// git/baseline: what apply_patch changed since start-up, for workspaces that are not git repositories
// (docs/tools.md#editing-files: `git_diff` there shows those changes). It keeps the original bytes of each
// file the first time a writer reports it is about to change it, and renders unified diffs against the
// current contents on demand.
//
// CONTRACT for writers (apply_patch's committer):
//   call `recordBeforeWrite(runtime, absPath)` for EVERY path a commit is about to create, overwrite, delete
//   or rename (source and destination), BEFORE the first byte changes — e.g. after locks are taken and before
//   the temp-file rename. It is synchronous, never throws, and only the first call per path records anything
//   (later calls are cheap no-ops), so calling it on every write is correct. A path that does not exist yet is
//   recorded as absent (the diff then shows a new file). Paths outside the workspace are ignored. A rollback
//   needs no call: the diff compares with the current contents, so restored files show no change.
//
// Bounded: files over MAX_FILE_BYTES, or past MAX_TOTAL_BYTES / MAX_FILES in all, are remembered without their
// contents (the diff then says the original was not kept). It never writes anything.
import { lstatSync } from 'node:fs';
import { readRegularVerified } from '../workspace/confined-fs.js';
import path from 'node:path';
import { isInside, resolvePath, toPosixRel, type WorkspaceRoot } from '../workspace/paths.js';
import { unifiedHunks } from './line-diff.js';

export const MAX_FILE_BYTES = 4 * 1024 * 1024;
export const MAX_TOTAL_BYTES = 64 * 1024 * 1024;
export const MAX_FILES = 10_000;
const BINARY_SNIFF_BYTES = 8000;

type Omitted = 'too_large' | 'budget' | 'not_a_file' | 'unreadable';

export interface Original {
  existed: boolean;
  /** Bytes at the first report; null when absent or omitted. */
  content: Buffer | null;
  mode: number | null;
  omitted: Omitted | null;
}

export class ChangeBaseline {
  private readonly originals = new Map<string, Original>();
  private bytes = 0;

  /** Records `rel` (workspace-relative) read from `abs`, once. */
  record(rel: string, abs: string, rootReal: string): void {
    if (this.originals.has(rel)) return;
    if (this.originals.size >= MAX_FILES) return;
    this.originals.set(rel, this.snapshot(abs, rootReal));
  }

  private snapshot(abs: string, rootReal: string): Original {
    let st;
    try {
      st = lstatSync(abs);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR')
        return { existed: false, content: null, mode: null, omitted: null };
      return { existed: true, content: null, mode: null, omitted: 'unreadable' };
    }
    if (!st.isFile()) return { existed: true, content: null, mode: st.mode, omitted: 'not_a_file' };
    if (st.size > MAX_FILE_BYTES)
      return { existed: true, content: null, mode: st.mode, omitted: 'too_large' };
    if (this.bytes + st.size > MAX_TOTAL_BYTES)
      return { existed: true, content: null, mode: st.mode, omitted: 'budget' };
    // Read through a verified descriptor: a directory swapped for a symlink meanwhile reads nothing outside.
    const content = readRegularVerified(rootReal, abs);
    if (!content) return { existed: true, content: null, mode: st.mode, omitted: 'unreadable' };
    this.bytes += content.length;
    return { existed: true, content, mode: st.mode, omitted: null };
  }

  /** Recorded workspace-relative paths and their originals, sorted by path. */
  entries(): Array<[string, Original]> {
    return [...this.originals.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  }

  get size(): number {
    return this.originals.size;
  }
}

function workspaceRel(root: WorkspaceRoot, absPath: string): string | null {
  const abs = path.resolve(absPath);
  if (isInside(root.lexical, abs)) return toPosixRel(root.lexical, abs);
  if (isInside(root.real, abs)) return toPosixRel(root.real, abs);
  return null;
}

/** What the baseline needs of the server: the workspace, the store of originals, a logger. */
export interface BaselineHost {
  readonly root: WorkspaceRoot;
  readonly baseline: ChangeBaseline;
  readonly log: { warn(msg: string, fields?: Record<string, unknown>): void };
}

/** See the module header: call before the first change to `absPath`. Never throws. */
export function recordBeforeWrite(runtime: BaselineHost, absPath: string): void {
  try {
    const rel = workspaceRel(runtime.root, absPath);
    if (rel === null || rel === '.') return;
    runtime.baseline.record(rel, path.join(runtime.root.lexical, rel), runtime.root.real);
  } catch (e) {
    runtime.log.warn('baseline: could not record a file before a write', { path: absPath, error: String(e) });
  }
}

export interface BaselineChange {
  path: string;
  kind: 'added' | 'deleted' | 'modified';
  additions: number | null;
  deletions: number | null;
  binary: boolean;
  /** The file's section, `diff --git …` and hunks (or a note when the original was not kept). */
  text: string;
}

interface Current {
  exists: boolean;
  content: Buffer | null;
  mode: number | null;
}

function current(root: WorkspaceRoot, rel: string): Current {
  let abs: string;
  try {
    // A directory may have been replaced by a symlink that leads out since the file was recorded.
    abs = resolvePath(root, rel).abs;
  } catch {
    return { exists: true, content: null, mode: null };
  }
  try {
    const st = lstatSync(abs);
    // Never follow a symlink here: it may lead out of the workspace.
    if (!st.isFile()) return { exists: true, content: null, mode: st.mode };
    if (st.size > MAX_FILE_BYTES) return { exists: true, content: null, mode: st.mode };
    const content = readRegularVerified(root.real, abs);
    return content
      ? { exists: true, content, mode: st.mode }
      : { exists: true, content: null, mode: st.mode };
  } catch {
    return { exists: false, content: null, mode: null };
  }
}

const isBinary = (b: Buffer) => b.subarray(0, BINARY_SNIFF_BYTES).includes(0);
const modeText = (m: number | null) => ((m ?? 0o644) & 0o111 ? '100755' : '100644');

function countOps(hunks: string): { additions: number; deletions: number } {
  let additions = 0;
  let deletions = 0;
  for (const l of hunks.split('\n')) {
    if (l.startsWith('+')) additions++;
    else if (l.startsWith('-')) deletions++;
  }
  return { additions, deletions };
}

/** One file's change against its original, or null when it is unchanged (or changed back). */
function changeFor(rel: string, orig: Original, now: Current, context: number): BaselineChange | null {
  if (!orig.existed && !now.exists) return null;
  const kind = !orig.existed ? 'added' : !now.exists ? 'deleted' : 'modified';
  const head = [`diff --git a/${rel} b/${rel}`];
  if (kind === 'added') head.push(`new file mode ${modeText(now.mode)}`);
  if (kind === 'deleted') head.push(`deleted file mode ${modeText(orig.mode)}`);
  const before = orig.existed ? orig.content : Buffer.alloc(0);
  const after = now.exists ? now.content : Buffer.alloc(0);
  if (before === null || after === null) {
    head.push(
      before === null
        ? `(the original contents were not kept: ${orig.omitted ?? 'unknown'}; the file was changed since start-up)`
        : '(the file is now not a regular file of at most 4 MiB inside the workspace; contents not compared)',
    );
    return { path: rel, kind, additions: null, deletions: null, binary: false, text: head.join('\n') + '\n' };
  }
  if (kind === 'modified' && before.equals(after)) return null;
  if (isBinary(before) || isBinary(after)) {
    const a = kind === 'added' ? '/dev/null' : `a/${rel}`;
    const b = kind === 'deleted' ? '/dev/null' : `b/${rel}`;
    head.push(`Binary files ${a} and ${b} differ`);
    return { path: rel, kind, additions: null, deletions: null, binary: true, text: head.join('\n') + '\n' };
  }
  const hunks = unifiedHunks(before.toString('utf8'), after.toString('utf8'), context);
  if (hunks)
    head.push(
      kind === 'added' ? '--- /dev/null' : `--- a/${rel}`,
      kind === 'deleted' ? '+++ /dev/null' : `+++ b/${rel}`,
    );
  return { path: rel, kind, binary: false, ...countOps(hunks), text: head.join('\n') + '\n' + hunks };
}

/**
 * Changes since start-up under `dirRel` (workspace-relative directory, `.` for all), optionally only for
 * `only` (workspace-relative files or directories), in path order.
 */
export function baselineChanges(
  runtime: BaselineHost,
  opts: { dirRel: string; only?: string[]; context: number },
): BaselineChange[] {
  const under = (rel: string, base: string) => base === '.' || rel === base || rel.startsWith(base + '/');
  const out: BaselineChange[] = [];
  for (const [rel, orig] of runtime.baseline.entries()) {
    if (!under(rel, opts.dirRel)) continue;
    if (opts.only && !opts.only.some((o) => under(rel, o))) continue;
    const change = changeFor(rel, orig, current(runtime.root, rel), opts.context);
    if (change) out.push(change);
  }
  return out;
}
