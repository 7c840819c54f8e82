// The one directory walker behind list_dir, list_files and the JS search engine. It applies, below the
// starting directory only: default excludes and .gitignore (unless includeIgnored), hidden entries (unless
// includeHidden), and an exclude matcher relative to the start. Symlinked directories are never entered;
// symlinks whose target is outside the workspace are reported as such so callers can drop them.
// Every directory is entered through a descriptor opened without following symlinks from its verified parent
// (workspace/confined-fs), and entries are stat'ed through it, so a directory swapped for a symlink while the
// walk runs is never followed and nothing outside the workspace is listed.
import type { Stats } from 'node:fs';
import { lstat, readdir, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { IgnoreChain, DEFAULT_EXCLUDES } from './ignore-rules.js';
import { excludedByAncestor, type Matcher } from './glob.js';
import { isInside, type WorkspaceRoot } from './paths.js';
import { at, closeDir, openDirAt, openDirForTool, type DirRef } from './confined-fs.js';

export type EntryType = 'file' | 'directory' | 'symlink' | 'other';

export interface WalkEntry {
  name: string;
  abs: string;
  /** Relative to the workspace root. */
  rel: string;
  /** Relative to the walk's start directory. */
  relBase: string;
  type: EntryType;
  /** For symlinks: the type of what it points at, and whether that is inside the workspace. */
  target?: { type: EntryType; inside: boolean; real: string };
  depth: number;
  /** lstat of the entry, taken through its directory's descriptor (only with WalkOptions.stat). */
  stat?: Stats;
}

export interface WalkOptions {
  includeHidden?: boolean;
  includeIgnored?: boolean;
  exclude?: Matcher;
  /** 1 = only the start directory's own entries. */
  maxDepth?: number;
  signal?: { stopped: boolean };
  /** lstat every visited entry (through the directory descriptor) and pass it as `entry.stat`. */
  stat?: boolean;
}

export function chainFor(root: WorkspaceRoot, startRel: string): IgnoreChain {
  let chain = IgnoreChain.forRoot(root.lexical);
  if (startRel === '.') return chain;
  let cur = '';
  for (const seg of startRel.split('/')) {
    cur = cur ? `${cur}/${seg}` : seg;
    chain = chain.descend(path.join(root.lexical, cur), cur);
  }
  return chain;
}

async function describeLink(root: WorkspaceRoot, linkAt: string): Promise<WalkEntry['target']> {
  try {
    const real = await realpath(linkAt);
    // Nothing about an outside target is looked at (not even its type).
    if (!isInside(root.real, real)) return { type: 'other', inside: false, real: '' };
    const st = await stat(real);
    return { type: st.isDirectory() ? 'directory' : st.isFile() ? 'file' : 'other', inside: true, real };
  } catch {
    return { type: 'other', inside: false, real: '' };
  }
}

type Dirent = { name: string; isDirectory(): boolean; isFile(): boolean; isSymbolicLink(): boolean };

function typeOf(d: Dirent): EntryType {
  return d.isDirectory() ? 'directory' : d.isFile() ? 'file' : d.isSymbolicLink() ? 'symlink' : 'other';
}

/**
 * Calls `visit` for every entry in depth-first, name-sorted order; `visit` returning false stops the walk.
 * `startReal` is the real path of the start directory (from resolvePath); it is opened and verified here.
 */
export async function walk(
  root: WorkspaceRoot,
  start: { abs: string; real: string; rel: string },
  opts: WalkOptions,
  visit: (e: WalkEntry) => boolean | void,
): Promise<void> {
  const maxDepth = opts.maxDepth ?? Infinity;
  const stop = opts.signal ?? { stopped: false };
  const startRel = start.rel;
  const recurse = async (
    dir: DirRef,
    dirAbs: string,
    dirRel: string,
    chain: IgnoreChain,
    depth: number,
  ): Promise<void> => {
    let dirents: Dirent[];
    try {
      dirents = await readdir(dir.at, { withFileTypes: true });
    } catch {
      return; // unreadable directory: skipped, like rg does
    }
    dirents.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const kept: Array<{ d: Dirent; rel: string; relBase: string; isDir: boolean }> = [];
    for (const d of dirents) {
      const name = d.name;
      const rel = dirRel === '.' ? name : `${dirRel}/${name}`;
      const relBase = path.posix.relative(startRel === '.' ? '' : startRel, rel) || name;
      const isDir = d.isDirectory();
      if (!opts.includeHidden && name.startsWith('.')) continue;
      if (!opts.includeIgnored) {
        if (isDir && DEFAULT_EXCLUDES.has(name)) continue;
        if (chain.ignores(rel, isDir)) continue;
      }
      if (opts.exclude && excludedByAncestor(opts.exclude, relBase)) continue;
      kept.push({ d, rel, relBase, isDir });
    }
    const stats = opts.stat
      ? await Promise.all(kept.map((k) => lstat(at(dir, k.d.name)).catch(() => undefined)))
      : [];
    for (let i = 0; i < kept.length; i++) {
      if (stop.stopped) return;
      const { d, rel, relBase, isDir } = kept[i] as (typeof kept)[number];
      const abs = path.join(dirAbs, d.name);
      const entry: WalkEntry = { name: d.name, abs, rel, relBase, type: typeOf(d), depth };
      if (opts.stat) entry.stat = stats[i];
      if (entry.type === 'symlink') entry.target = await describeLink(root, at(dir, d.name));
      if (visit(entry) === false) {
        stop.stopped = true;
        return;
      }
      if (isDir && depth < maxDepth) {
        let sub: DirRef;
        try {
          sub = openDirAt(dir, d.name);
        } catch {
          continue; // replaced by a symlink or removed since it was listed: not entered
        }
        try {
          const subChain = opts.includeIgnored ? chain : chain.descend(sub.at, rel);
          await recurse(sub, abs, rel, subChain, depth + 1);
        } finally {
          closeDir(sub);
        }
      }
    }
  };
  const dir = openDirForTool(root.real, start.real, start.rel);
  try {
    const chain = opts.includeIgnored ? IgnoreChain.empty() : chainFor(root, startRel);
    await recurse(dir, start.abs, startRel, chain, 1);
  } finally {
    closeDir(dir);
  }
}
