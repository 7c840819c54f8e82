// The file-system primitives apply_patch writes with, each refusing to follow a symlink (decision 28): files
// are opened with O_NOFOLLOW and the opened descriptor's real path is checked through /proc/self/fd; a
// directory is trusted only while its real path equals itself (no component was swapped for a symlink).
// Remaining window: a parent directory swapped for a symlink between the last check and rename(2) itself;
// Node has no renameat() on directory descriptors, so that gap (microseconds) cannot be closed here.
import { constants, linkSync, lstatSync, readlinkSync, realpathSync, type Stats } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { createHash, randomBytes } from 'node:crypto';
import path from 'node:path';

const O_NOFOLLOW = constants.O_NOFOLLOW ?? 0;
const HAS_PROC_FD = (() => {
  try {
    readlinkSync('/proc/self/fd/0');
    return true;
  } catch {
    return false;
  }
})();

/** Raised when a path stopped being what was checked (a symlink appeared, a directory moved). */
export class PathRaceError extends Error {
  constructor(
    readonly file: string,
    readonly found: string | undefined,
  ) {
    super(`${file} changed into or behind a symlink while the patch was being written`);
  }
}

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
  hash: string;
}

export function hashOf(buf: Buffer): string {
  return createHash('sha256').update(buf).digest('hex');
}

/** The real path behind a descriptor, or undefined where /proc is not mounted. */
function fdPath(fd: number): string | undefined {
  if (!HAS_PROC_FD) return undefined;
  try {
    return readlinkSync(`/proc/self/fd/${fd}`);
  } catch {
    return undefined;
  }
}

function assertFdIs(fh: FileHandle, file: string): void {
  const real = fdPath(fh.fd);
  if (real !== undefined && real !== file) throw new PathRaceError(file, real);
}

/** Reads a regular file without following a symlink at any point that was checked. */
export async function readSnapshot(file: string): Promise<Snapshot> {
  // O_NONBLOCK: a FIFO swapped in after the lstat must not hang the call; it is refused by the stat below.
  const fh = await open(file, constants.O_RDONLY | O_NOFOLLOW | constants.O_NONBLOCK);
  try {
    assertFdIs(fh, file);
    const st = await fh.stat();
    if (!st.isFile()) throw Object.assign(new Error(`${file} is not a regular file`), { code: 'EISDIR' });
    const buf = await fh.readFile();
    return { buf, mode: st.mode & 0o7777, hash: hashOf(buf) };
  } finally {
    await fh.close();
  }
}

/** Throws PathRaceError unless `dir` still resolves to itself (no symlink anywhere on its path). */
export function assertRealDir(dir: string): void {
  let real: string;
  try {
    real = realpathSync.native(dir);
  } catch (e) {
    throw new PathRaceError(dir, (e as NodeJS.ErrnoException).code);
  }
  if (real !== dir) throw new PathRaceError(dir, real);
}

/** A hidden sibling name for temp files and backups, short enough for any file-name limit. */
export function siblingName(name: string, kind: 'tmp' | 'bak'): string {
  const base = Buffer.byteLength(name) > 120 ? name.slice(0, 40) : name;
  return `.${base}.${randomBytes(4).toString('hex')}.wbpatch.${kind}`;
}

/**
 * Writes `content` to a new temp file next to `name` in `dir`, with `mode`, fsynced. The path is pushed to
 * `created` as soon as the file exists, so the caller can remove it whatever fails afterwards.
 */
export async function writeTemp(
  dir: string,
  name: string,
  content: Buffer,
  mode: number,
  created: string[],
): Promise<string> {
  assertRealDir(dir);
  const tmp = path.join(dir, siblingName(name, 'tmp'));
  const fh = await open(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | O_NOFOLLOW, 0o600);
  created.push(tmp);
  try {
    assertFdIs(fh, tmp);
    // write(2) may write less than asked (a nearly full disk): loop until all is written or it fails.
    for (let off = 0; off < content.length; ) {
      const { bytesWritten } = await fh.write(content, off, content.length - off, off);
      if (bytesWritten === 0) throw Object.assign(new Error('write wrote nothing'), { code: 'EIO', syscall: 'write' });
      off += bytesWritten;
    }
    await fh.chmod(mode);
    await fh.sync();
  } finally {
    await fh.close();
  }
  assertRealDir(dir);
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

/** fsync a directory so renames in it are durable; best effort (some file systems refuse). */
export async function syncDir(dir: string): Promise<void> {
  let fh: FileHandle | undefined;
  try {
    fh = await open(dir, constants.O_RDONLY | constants.O_DIRECTORY);
    await fh.sync();
  } catch {
    // Durability of the directory entry is best effort; the data itself was fsynced before the rename.
  } finally {
    await fh?.close();
  }
}
