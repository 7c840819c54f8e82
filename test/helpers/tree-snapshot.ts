// One snapshot of a directory tree for every test that proves what a call did or did not touch: each entry
// (lstat, links never followed) as type, mode and content hash or link target, keyed by its path relative to
// the root ('.' for the root). With `rewrites`, files also carry size, mtime and inode, so a file rewritten with
// the same bytes shows too; those hashes are cached by inode, size, mtime and ctime, since the hostile-input
// properties take thousands of snapshots. `treeChanges` lists what differs, one readable line per path.
// `readableTree` is the golden scenarios' form: contents as text and the executable bit only, so that a
// workspace compares equal to a scenario's `expected` folder.
import { isUtf8 } from 'node:buffer';
import { createHash } from 'node:crypto';
import { lstatSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';

export type Snapshot = Record<string, string>;

export interface SnapshotOptions {
  /** Also record size, mtime and inode of files: a rewrite with the same bytes is a change. */
  rewrites?: boolean;
}

const hashes = new Map<string, string>();

function fileEntry(abs: string, mode: string, opts: SnapshotOptions): string {
  if (!opts.rewrites) return `file ${mode} ${createHash('sha256').update(readFileSync(abs)).digest('hex')}`;
  const st = lstatSync(abs);
  const key = `${abs}|${st.ino}|${st.size}|${st.mtimeMs}|${st.ctimeMs}`;
  let hash = hashes.get(key);
  if (hash === undefined) {
    hash = createHash('sha256').update(readFileSync(abs)).digest('hex');
    hashes.set(key, hash);
  }
  return `file ${mode} ${hash} ${st.size} ${st.mtimeMs} ${st.ino}`;
}

export function snapshotTree(root: string, opts: SnapshotOptions = {}): Snapshot {
  const out: Snapshot = {};
  const visit = (abs: string, rel: string) => {
    const st = lstatSync(abs);
    const mode = (st.mode & 0o7777).toString(8);
    if (st.isSymbolicLink()) out[rel] = `link ${mode} -> ${readlinkSync(abs)}`;
    else if (st.isFile()) out[rel] = fileEntry(abs, mode, opts);
    else if (st.isDirectory()) {
      out[rel] = `dir ${mode}`;
      for (const name of readdirSync(abs).sort())
        visit(path.join(abs, name), rel === '.' ? name : `${rel}/${name}`);
    } else out[rel] = `other ${mode}`;
  };
  visit(root, '.');
  return out;
}

/** The paths whose entries differ, in order, as `path: before → after` ("(absent)" for a missing side). */
export function treeChanges(before: Snapshot, after: Snapshot): string[] {
  const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
  return keys
    .filter((k) => before[k] !== after[k])
    .map((k) => `${k}: ${before[k] ?? '(absent)'} → ${after[k] ?? '(absent)'}`);
}

/** Fails, naming every change, when the tree at `root` differs from `before`. */
export function expectTreeUnchanged(
  before: Snapshot,
  root: string,
  what: string,
  opts: SnapshotOptions = {},
): void {
  expect(treeChanges(before, snapshotTree(root, opts)), `${what} changed`).toEqual([]);
}

/** The tree as a readable map: `dir/` entries, symlinks, files as exec marker + content (JSON text or hex);
 *  a `.keep` file (what keeps an empty scenario folder in git) is left out. */
export function readableTree(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      const abs = path.join(dir, name);
      const rel = path.relative(root, abs).split(path.sep).join('/');
      if (rel === '.keep') continue;
      const st = lstatSync(abs);
      if (st.isDirectory()) {
        out[rel + '/'] = 'dir';
        walk(abs);
      } else if (st.isSymbolicLink()) out[rel] = 'symlink';
      else {
        const buf = readFileSync(abs);
        const exec = (st.mode & 0o111) !== 0 ? 'x ' : '- ';
        out[rel] = exec + (isUtf8(buf) ? JSON.stringify(buf.toString('utf8')) : 'hex:' + buf.toString('hex'));
      }
    }
  };
  walk(root);
  return out;
}
