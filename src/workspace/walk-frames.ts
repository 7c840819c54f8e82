// The walker's stack of open directories, with a bounded number of descriptors: only the deepest few frames and
// one frame every CHECKPOINT_EVERY levels keep their directory open; a frame whose descriptor was closed is
// reopened, when the walk comes back to it, from the nearest open ancestor one name at a time (no-follow opens,
// as workspace/confined-fs does), and abandoned if what is there now is not the directory it was. So a walk
// 256 levels deep holds about a dozen directory descriptors, never one per level.
// A large directory's names are read in slices (opendir, a batch at a time) and sorted in slices, so a directory
// of 200,000 entries does not hold the event loop; a small one (most) in one readdir, which costs a fraction.
import { fstatSync, opendirSync, readdirSync, type Dirent } from 'node:fs';
import type { IgnoreChain } from './ignore-rules.js';
import { closeDir, openDirAt, type DirRef } from './confined-fs.js';
import { comparePaths } from './path-order.js';
import { sortSliced, type TimeSlicer } from '../core/slice.js';

/** Frames at the top of the stack that keep their descriptor. */
const OPEN_WINDOW = 4;
/** Every this many levels a frame keeps its descriptor as a point to reopen deeper frames from. */
const CHECKPOINT_EVERY = 64;
const READ_BATCH = 256;
/**
 * A directory whose size (st_size: its entries' space on ext4, xfs and btrfs, 20 bytes an entry on tmpfs) is at
 * most this is read in one readdir: a few thousand names at most, well under a slice. Larger ones are read in
 * batches. The size only picks the faster way; both read the same names.
 */
const ONE_READ_DIR_BYTES = 128 * 1024;

export type TypeCode = 'd' | 'f' | 'l' | 'o';

export interface Frame {
  /** Name in the parent ('' for the start directory). */
  name: string;
  abs: string;
  /** Relative to the workspace root ('.' for the root). */
  rel: string;
  /** Relative to the walk's start ('' for the start). */
  relBase: string;
  /** 0 for the start directory. */
  depth: number;
  chain: IgnoreChain;
  dir: DirRef | undefined;
  ino: bigint;
  /** Entries as `name + "\0" + type code`, sorted by name (path-order). */
  entries: string[];
  next: number;
}

function typeCode(d: Dirent): TypeCode {
  return d.isDirectory() ? 'd' : d.isFile() ? 'f' : d.isSymbolicLink() ? 'l' : 'o';
}

/** The sorted entries of an open directory; an unreadable directory has none (skipped, as rg does). */
export async function readEntries(dir: DirRef, slicer: TimeSlicer, size: number): Promise<string[]> {
  if (size <= ONE_READ_DIR_BYTES) {
    let all: Dirent[];
    try {
      all = readdirSync(dir.at, { withFileTypes: true });
    } catch {
      return [];
    }
    const out = new Array<string>(all.length);
    for (let i = 0; i < all.length; i++) {
      const d = all[i] as Dirent;
      out[i] = `${d.name}\0${typeCode(d)}`;
    }
    return sortSliced(out, comparePaths, slicer);
  }
  const out: string[] = [];
  let handle;
  try {
    handle = opendirSync(dir.at, { bufferSize: READ_BATCH });
  } catch {
    return out;
  }
  try {
    for (let d = handle.readSync(), n = 0; d !== null; d = handle.readSync(), n++) {
      out.push(`${d.name}\0${typeCode(d)}`);
      if (n % READ_BATCH === 0) await slicer.tick();
    }
  } catch {
    // a directory that fails part-way: what was read is listed
  } finally {
    handle.closeSync();
  }
  return sortSliced(out, comparePaths, slicer);
}

export function entryName(e: string): string {
  return e.slice(0, -2);
}

export function entryType(e: string): TypeCode {
  return e.charAt(e.length - 1) as TypeCode;
}

/** Index of the first entry whose name sorts at or after `name`. */
export function firstAtOrAfter(entries: readonly string[], name: string): number {
  let lo = 0;
  let hi = entries.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (comparePaths(entryName(entries[mid] as string), name) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export function inoOf(dir: DirRef): bigint {
  return fstatSync(dir.fd, { bigint: true }).ino;
}

/** The directory's identity and size (which picks how readEntries reads it). */
export function identityOf(dir: DirRef): { ino: bigint; size: number } {
  const st = fstatSync(dir.fd, { bigint: true });
  return { ino: st.ino, size: Number(st.size) };
}

export class DirStack {
  readonly frames: Frame[] = [];

  get top(): Frame | undefined {
    return this.frames[this.frames.length - 1];
  }

  push(f: Frame): void {
    this.frames.push(f);
    const k = this.frames.length - 1 - OPEN_WINDOW;
    const out = this.frames[k];
    if (k > 0 && k % CHECKPOINT_EVERY !== 0 && out?.dir) {
      closeDir(out.dir);
      out.dir = undefined;
    }
  }

  pop(): void {
    const f = this.frames.pop();
    if (f?.dir) closeDir(f.dir);
  }

  /** The top frame's open directory, reopened if needed; undefined when it is gone or no longer the same. */
  topDir(): DirRef | undefined {
    const k = this.frames.length - 1;
    const f = this.frames[k];
    if (!f) return undefined;
    if (f.dir) return f.dir;
    let j = k - 1;
    while (j > 0 && !this.frames[j]?.dir) j--;
    let cur = this.frames[j]?.dir;
    let temp: DirRef | undefined;
    try {
      for (let m = j + 1; m <= k && cur; m++) {
        const next = openDirAt(cur, (this.frames[m] as Frame).name);
        if (temp) closeDir(temp);
        temp = next;
        cur = next;
      }
    } catch {
      if (temp) closeDir(temp);
      return undefined; // removed or replaced by a non-directory since it was read
    }
    if (!temp || inoOf(temp) !== f.ino) {
      if (temp) closeDir(temp);
      return undefined;
    }
    f.dir = temp;
    return temp;
  }

  closeAll(): void {
    while (this.frames.length) this.pop();
  }
}
