// The file-system primitives apply_patch writes with (docs/design-notes.md#symlink-races). Files are opened
// with O_NOFOLLOW; a read checks the opened descriptor's real path through /proc/self/fd; writes name their
// files through directory descriptors (workspace/confined-fs DirChain), so no swapped-in symlink can redirect
// them outside.
import {
  closeSync,
  constants,
  fchmodSync,
  fstatSync,
  fsync,
  linkSync,
  open,
  lstatSync,
  openSync,
  readFileSync,
  readlinkSync,
  writeSync,
  type Stats,
} from 'node:fs';
import { at, fdPath, PathRaceError, type DirRef } from '../workspace/confined-fs.js';
import { randomHex } from '../core/random.js';

const O_NOFOLLOW = constants.O_NOFOLLOW ?? 0;
export type Probe =
  | { kind: 'missing' }
  | { kind: 'file'; stat: Stats }
  | { kind: 'dir' }
  | { kind: 'symlink'; target: string }
  | { kind: 'other' };

export function probe(file: string): Probe {
  let st: Stats;
  try {
    st = lstatSync(file);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return { kind: 'missing' };
    throw e;
  }
  if (st.isFile()) return { kind: 'file', stat: st };
  if (st.isDirectory()) return { kind: 'dir' };
  if (st.isSymbolicLink()) return { kind: 'symlink', target: readlinkSync(file) };
  return { kind: 'other' };
}

export interface Snapshot {
  buf: Buffer;
  mode: number;
}

function assertFdIs(fd: number, expected: string): void {
  const real = fdPath(fd);
  if (real !== undefined && real !== expected) throw new PathRaceError(expected, real);
}

function openAsync(file: string, flags: number, mode: number): Promise<number> {
  return new Promise((resolve, reject) => open(file, flags, mode, (e, fd) => (e ? reject(e) : resolve(fd))));
}

/** fsync on the thread pool: the one call here that waits for the disk, so it must not block the event loop. */
function fsyncAsync(fd: number): Promise<void> {
  return new Promise((resolve, reject) => fsync(fd, (e) => (e ? reject(e) : resolve())));
}

/**
 * Reads a regular file without following a symlink at any point that was checked. Synchronous on purpose:
 * the file is in the page cache (it was just stat'ed), and a thread-pool round trip per call would cost more
 * than the read (measured: it doubles the latency of a one-line patch).
 */
export function readSnapshot(file: string, expectedReal: string = file): Snapshot {
  // O_NONBLOCK: a FIFO swapped in after the lstat must not hang the call; it is refused by the stat below.
  const fd = openSync(file, constants.O_RDONLY | O_NOFOLLOW | constants.O_NONBLOCK);
  try {
    assertFdIs(fd, expectedReal);
    const st = fstatSync(fd);
    if (!st.isFile()) throw Object.assign(new Error(`${file} is not a regular file`), { code: 'EISDIR' });
    const buf = readFileSync(fd);
    return { buf, mode: st.mode & 0o7777 };
  } finally {
    closeSync(fd);
  }
}

let siblingCounter = 0;
const SIBLING_PREFIX = `${process.pid.toString(36)}-${randomHex(3)}`;

/**
 * A hidden sibling name for temp files and backups, short enough for any file-name limit, unique per process
 * (pid, a per-process random part, a counter); O_EXCL and link() still refuse to reuse an existing name.
 */
export function siblingName(name: string, kind: 'tmp' | 'bak'): string {
  const base = Buffer.byteLength(name) > 120 ? name.slice(0, 40) : name;
  return `.${base}.${SIBLING_PREFIX}-${(++siblingCounter).toString(36)}.wbpatch.${kind}`;
}

/** S_ISUID | S_ISGID: never kept by a write. */
const SETID_BITS = 0o6000;

/**
 * Writes `content` to a new temp file next to `name` in `dir`, with `mode` less setuid/setgid, fsynced. The path is pushed to
 * `created` as soon as the file exists, so the caller can remove it whatever fails afterwards.
 */
export async function writeTemp(
  dir: DirRef,
  name: string,
  content: Buffer,
  mode: number,
  created: string[],
): Promise<string> {
  const tmp = at(dir, siblingName(name, 'tmp'));
  // Creating a file takes a journal handle, which can wait for another request's fsync: on the pool.
  const fd = await openAsync(
    tmp,
    constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | O_NOFOLLOW,
    0o600,
  );
  created.push(tmp);
  try {
    // write(2) may write less than asked (a nearly full disk): loop until all is written or it fails.
    for (let off = 0; off < content.length;) {
      const n = writeSync(fd, content, off, content.length - off, off);
      if (n === 0) throw Object.assign(new Error('write wrote nothing'), { code: 'EIO', syscall: 'write' });
      off += n;
    }
    // Never setuid or setgid: a rewritten file would otherwise carry those bits with new contents (and, on a
    // root server, a new root owner) — a door for every local user (docs/security-model.md).
    fchmodSync(fd, mode & ~SETID_BITS);
    await fsyncAsync(fd);
  } finally {
    closeSync(fd);
  }
  return tmp;
}

/** Creates `to` as a new name for `from` without ever replacing an existing file (EEXIST instead). */
export function linkNoClobber(from: string, to: string): 'linked' | 'unsupported' {
  try {
    linkSync(from, to);
    return 'linked';
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EPERM' || code === 'ENOTSUP' || code === 'EOPNOTSUPP' || code === 'ENOSYS')
      return 'unsupported';
    throw e;
  }
}
