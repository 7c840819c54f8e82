// The one directory walker behind list_dir, list_files and the JS search engine. It applies, below the
// starting directory only: default excludes and .gitignore (unless includeIgnored), hidden entries (unless
// includeHidden), and an exclude matcher relative to the start. Symlinked directories are never entered;
// symlinks whose target is outside the workspace are reported as such so callers can drop them. Every
// directory is entered through a descriptor opened without following symlinks from its verified parent
// (workspace/confined-fs), and entries are stat'ed through it, so a directory swapped for a symlink while the
// walk runs is never followed and nothing outside the workspace is listed. Bounded whatever the tree
// (docs/tools.md#limits): iterative (no recursion), at most MAX_WALK_DEPTH levels (the result says when that
// stopped it), a dozen directory descriptors at most (walk-frames.ts), and the event loop is yielded to every
// few milliseconds. Entries come in path order (path-order.ts), so a walk can resume `from` a path without
// entering the subtrees before it.
import type { Stats } from 'node:fs';
import { lstatSync, realpathSync, statSync } from 'node:fs';
import { TimeSlicer } from '../core/slice.js';
import { IgnoreChain, DEFAULT_EXCLUDES } from './ignore-rules.js';
import type { Matcher } from './glob.js';
import { isInside, type WorkspaceRoot } from './paths.js';
import { at, openDirAt, openDirForTool, type DirRef } from './confined-fs.js';
import { comparePaths, componentBelow, wholeSubtreeBefore } from './path-order.js';
import {
  DirStack,
  entryName,
  entryType,
  firstAtOrAfter,
  identityOf,
  readEntries,
  type Frame,
  type TypeCode,
} from './walk-frames.js';

/** Levels below the start a walk descends at most; deeper directories are listed but not entered. */
export const MAX_WALK_DEPTH = 256;

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
  /**
   * lstat of the entry, taken through its directory's descriptor when first read, and only while `visit` runs
   * (afterwards the descriptor may be closed or reused: a later first read gives undefined). Lazy, so a walk
   * stats only what its caller looks at (a page of a listing, not the whole tree).
   */
  readonly stat: Stats | undefined;
}

export interface WalkOptions {
  includeHidden?: boolean;
  includeIgnored?: boolean;
  exclude?: Matcher;
  /** 1 = only the start directory's own entries; at most MAX_WALK_DEPTH. */
  maxDepth?: number;
  signal?: { stopped: boolean };
  /** Skip entries (relative to the root) that sort before this path, and the subtrees wholly before it. */
  from?: string;
  /** Yields to the event loop; its budget, when it expires, ends the walk (`WalkSummary.expired`). */
  slicer?: TimeSlicer;
}

export interface WalkSummary {
  /** The first directory not entered because it is MAX_WALK_DEPTH levels down. */
  depthLimited?: string;
  /** The slicer's budget ran out before the walk ended. */
  expired?: boolean;
}

export function chainFor(root: WorkspaceRoot, startRel: string): IgnoreChain {
  let chain = IgnoreChain.forRoot(root.lexical);
  if (startRel === '.') return chain;
  let cur = '';
  for (const seg of startRel.split('/')) {
    cur = cur ? `${cur}/${seg}` : seg;
    chain = chain.descend(joinPath(root.lexical, cur), cur);
  }
  return chain;
}

/** `dir/name` for a normalised directory path and a plain name (path.join's normalising costs a walk dearly). */
function joinPath(dir: string, name: string): string {
  return dir.endsWith('/') ? dir + name : `${dir}/${name}`;
}

function describeLink(root: WorkspaceRoot, linkAt: string): WalkEntry['target'] {
  try {
    const real = realpathSync.native(linkAt);
    // Nothing about an outside target is looked at (not even its type).
    if (!isInside(root.real, real)) return { type: 'other', inside: false, real: '' };
    const st = statSync(real);
    return { type: st.isDirectory() ? 'directory' : st.isFile() ? 'file' : 'other', inside: true, real };
  } catch {
    return { type: 'other', inside: false, real: '' };
  }
}

const TYPES: Record<TypeCode, EntryType> = { d: 'directory', f: 'file', l: 'symlink', o: 'other' };

type Visit = (e: WalkEntry) => boolean | void | Promise<boolean | void>;

/**
 * Calls `visit` for every entry in path order (depth first, names sorted); `visit` returning false stops the
 * walk. `start.real` is the real path of the start directory (from resolvePath); it is opened and verified here.
 */
export async function walk(
  root: WorkspaceRoot,
  start: { abs: string; real: string; rel: string },
  opts: WalkOptions,
  visit: Visit,
): Promise<WalkSummary> {
  const w = new Walker(root, opts);
  const chain = opts.includeIgnored ? IgnoreChain.empty() : chainFor(root, start.rel);
  const dir = openDirForTool(root.real, start.real, start.rel);
  try {
    await w.enter(dir, { name: '', abs: start.abs, rel: start.rel, relBase: '', depth: 0, chain });
    await w.run(visit);
  } finally {
    w.stack.closeAll();
  }
  return w.summary;
}

class Walker {
  readonly stack = new DirStack();
  readonly summary: WalkSummary = {};
  private readonly slicer: TimeSlicer;
  private readonly maxDepth: number;
  /** opts.from until the walk has passed it (everything after sorts after it: no more comparing). */
  private from: string | undefined;

  constructor(
    private readonly root: WorkspaceRoot,
    private readonly opts: WalkOptions,
  ) {
    this.slicer = opts.slicer ?? new TimeSlicer();
    this.maxDepth = Math.min(opts.maxDepth ?? MAX_WALK_DEPTH, MAX_WALK_DEPTH);
    this.from = opts.from;
  }

  /**
   * Pushes a frame for an opened directory (the stack owns `dir` from here on). With `parentChain`, the frame's
   * ignore rules are the parent's plus its own .gitignore, which is read only when the directory lists one.
   */
  async enter(
    dir: DirRef,
    f: Omit<Frame, 'dir' | 'ino' | 'entries' | 'next'>,
    parentChain?: IgnoreChain,
  ): Promise<void> {
    const frame: Frame = { ...f, dir, ino: 0n, entries: [], next: 0 };
    this.stack.push(frame);
    const id = identityOf(dir);
    frame.ino = id.ino;
    frame.entries = await readEntries(dir, this.slicer, id.size);
    if (parentChain && hasIgnoreFile(frame.entries)) frame.chain = parentChain.descend(dir.at, f.rel);
    const from = this.from;
    const first = from === undefined ? undefined : componentBelow(f.rel, from);
    if (first !== undefined) frame.next = firstAtOrAfter(frame.entries, first);
  }

  async run(visit: Visit): Promise<void> {
    const stop = this.opts.signal ?? { stopped: false };
    for (let f = this.stack.top; f && !stop.stopped; f = this.stack.top) {
      if (f.next >= f.entries.length) {
        this.stack.pop();
        continue;
      }
      const e = f.entries[f.next++] as string;
      if (this.slicer.due) {
        await this.slicer.tick();
        if (this.slicer.expired) {
          this.summary.expired = true;
          return;
        }
      }
      const name = entryName(e);
      const type = TYPES[entryType(e)];
      const rel = f.rel === '.' ? name : `${f.rel}/${name}`;
      if (!this.keep(f, name, rel, type === 'directory')) continue;
      const dir = this.stack.topDir();
      if (!dir) {
        this.stack.pop(); // the directory went away (or is another one now): its remaining entries with it
        continue;
      }
      const relBase = f.relBase ? `${f.relBase}/${name}` : name;
      const entry = new Entry(dir, name, joinPath(f.abs, name), rel, relBase, type, f.depth + 1);
      if (type === 'symlink') entry.target = describeLink(this.root, at(dir, name));
      let r = visit(entry);
      if (r instanceof Promise) r = await r;
      entry.done();
      if (r === false) {
        stop.stopped = true;
        return;
      }
      if (type === 'directory') await this.descend(f, dir, entry);
    }
  }

  private keep(f: Frame, name: string, rel: string, isDir: boolean): boolean {
    const o = this.opts;
    if (this.from !== undefined && this.before(rel, this.from)) return false;
    if (!o.includeHidden && name.startsWith('.')) return false;
    if (!o.includeIgnored) {
      if (isDir && DEFAULT_EXCLUDES.has(name)) return false;
      if (f.chain.ignores(rel, isDir)) return false;
    }
    // Ancestors were checked when they were entered, so the entry's own path is all that is left to match.
    if (o.exclude && o.exclude(f.relBase ? `${f.relBase}/${name}` : name)) return false;
    return true;
  }

  /** Whether `rel` and its subtree sort before `from`; forgets `from` once `rel` sorts after it. */
  private before(rel: string, from: string): boolean {
    if (comparePaths(rel, from) > 0) {
      this.from = undefined;
      return false;
    }
    return wholeSubtreeBefore(rel, from);
  }

  private async descend(f: Frame, dir: DirRef, e: WalkEntry): Promise<void> {
    if (e.depth >= this.maxDepth) {
      if (this.maxDepth === MAX_WALK_DEPTH) this.summary.depthLimited ??= e.rel;
      return;
    }
    let sub: DirRef;
    try {
      sub = openDirAt(dir, e.name);
    } catch {
      return; // replaced by a symlink or removed since it was listed: not entered
    }
    await this.enter(
      sub,
      { name: e.name, abs: e.abs, rel: e.rel, relBase: e.relBase, depth: e.depth, chain: f.chain },
      this.opts.includeIgnored ? undefined : f.chain,
    );
  }
}

/** Whether sorted frame entries include a `.gitignore` that is a file (or a symlink, which the read refuses). */
function hasIgnoreFile(entries: readonly string[]): boolean {
  const i = firstAtOrAfter(entries, '.gitignore');
  const e = entries[i];
  return e !== undefined && entryName(e) === '.gitignore' && entryType(e) !== 'd';
}

/** A walk entry whose lstat is taken on first use, through the directory descriptor, while that is valid. */
class Entry implements WalkEntry {
  target?: WalkEntry['target'];
  private st: Stats | undefined | null = null;

  constructor(
    private dir: DirRef | undefined,
    readonly name: string,
    readonly abs: string,
    readonly rel: string,
    readonly relBase: string,
    readonly type: EntryType,
    readonly depth: number,
  ) {}

  get stat(): Stats | undefined {
    if (this.st === null) this.st = this.dir ? lstatQuiet(at(this.dir, this.name)) : undefined;
    return this.st;
  }

  /** The visit is over: the descriptor is no longer this entry's to use. */
  done(): void {
    this.dir = undefined;
  }
}

function lstatQuiet(p: string): Stats | undefined {
  try {
    return lstatSync(p, { throwIfNoEntry: false });
  } catch {
    return undefined;
  }
}
