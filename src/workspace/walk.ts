// The one directory walker behind list_dir, list_files and the JS search engine. It applies, below the
// starting directory only: default excludes and .gitignore (unless includeIgnored), hidden entries (unless
// includeHidden), and an exclude matcher relative to the start. Symlinked directories are never entered;
// symlinks whose target is outside the workspace are reported as such so callers can drop them.
import { readdir, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { IgnoreChain, DEFAULT_EXCLUDES } from './ignore-rules.js';
import { excludedByAncestor, type Matcher } from './glob.js';
import { isInside, type WorkspaceRoot } from './paths.js';

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
}

export interface WalkOptions {
  includeHidden?: boolean;
  includeIgnored?: boolean;
  exclude?: Matcher;
  /** 1 = only the start directory's own entries. */
  maxDepth?: number;
  signal?: { stopped: boolean };
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

async function describeLink(root: WorkspaceRoot, abs: string): Promise<WalkEntry['target']> {
  try {
    const real = await realpath(abs);
    const st = await stat(real);
    return {
      type: st.isDirectory() ? 'directory' : st.isFile() ? 'file' : 'other',
      inside: isInside(root.real, real),
      real,
    };
  } catch {
    return { type: 'other', inside: false, real: '' };
  }
}

/** Calls `visit` for every entry in depth-first, name-sorted order; `visit` returning false stops the walk. */
export async function walk(
  root: WorkspaceRoot,
  startAbs: string,
  startRel: string,
  opts: WalkOptions,
  visit: (e: WalkEntry) => boolean | void,
): Promise<void> {
  const maxDepth = opts.maxDepth ?? Infinity;
  const stop = opts.signal ?? { stopped: false };
  const recurse = async (
    dirAbs: string,
    dirRel: string,
    chain: IgnoreChain,
    depth: number,
  ): Promise<void> => {
    let dirents;
    try {
      dirents = await readdir(dirAbs, { withFileTypes: true });
    } catch {
      return; // unreadable directory: skipped, like rg does
    }
    dirents.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const d of dirents) {
      if (stop.stopped) return;
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
      const abs = path.join(dirAbs, name);
      const type: EntryType = isDir
        ? 'directory'
        : d.isFile()
          ? 'file'
          : d.isSymbolicLink()
            ? 'symlink'
            : 'other';
      const entry: WalkEntry = { name, abs, rel, relBase, type, depth };
      if (type === 'symlink') entry.target = await describeLink(root, abs);
      if (visit(entry) === false) {
        stop.stopped = true;
        return;
      }
      if (isDir && depth < maxDepth) {
        const sub = opts.includeIgnored ? chain : chain.descend(abs, rel);
        await recurse(abs, rel, sub, depth + 1);
      }
    }
  };
  await recurse(startAbs, startRel, opts.includeIgnored ? IgnoreChain.empty() : chainFor(root, startRel), 1);
}
