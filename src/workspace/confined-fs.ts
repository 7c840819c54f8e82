// The one door through which the server opens, lists, writes and renames workspace paths
// (docs/tools.md#paths, docs/design-notes.md#symlink-races). Every descriptor is checked after it is opened,
// on the descriptor itself: its real path (/proc/self/fd/N) must lie inside the workspace, so a directory
// swapped for a symlink between the path check and the open is caught instead of followed. Directories are
// entered and written through descriptors: `/proc/self/fd/N/name` resolves `name` inside the directory N
// refers to (openat semantics), so with O_NOFOLLOW no swap can redirect a walk, a create, a rename or an
// unlink outside. Non-regular files are refused without a blocking open (O_NONBLOCK, then fstat). Where /proc
// is absent (not Linux) the same calls fall back to plain paths and the guarantee narrows to the path check
// (docs/security-model.md).
import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  readlinkSync,
  readSync,
  realpathSync,
  rmdirSync,
  type BigIntStats,
} from 'node:fs';
import path from 'node:path';
import { ToolError } from '../core/tool-error.js';
import { errnoToTool, isInside } from './paths.js';

const O_NOFOLLOW = constants.O_NOFOLLOW ?? 0;
const O_NONBLOCK = constants.O_NONBLOCK ?? 0;
const O_NOCTTY = constants.O_NOCTTY ?? 0;
const O_DIRECTORY = constants.O_DIRECTORY ?? 0;
const O_CLOEXEC = (constants as Record<string, number>).O_CLOEXEC ?? 0;

/** Read flags: never follow a last-component symlink, never block on a FIFO, never adopt a terminal. */
const READ_FLAGS = constants.O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC;
const DIR_FLAGS = constants.O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;

/** Whether /proc/self/fd gives descriptor paths and openat semantics here (Linux). */
export const FD_PATHS = (() => {
  try {
    readlinkSync('/proc/self/fd/0');
    return true;
  } catch {
    return false;
  }
})();

/** The real path behind a descriptor, or undefined where /proc is not mounted. */
export function fdPath(fd: number): string | undefined {
  if (!FD_PATHS) return undefined;
  try {
    return readlinkSync(`/proc/self/fd/${fd}`);
  } catch {
    return undefined;
  }
}

/** A path that names `name` inside the directory open as `fd` (openat semantics). */
export function at(dir: DirRef, name: string): string {
  return `${dir.at}/${name}`;
}

/** An open directory: `at` is its /proc/self/fd path (or its real path without /proc), `real` for messages. */
export interface DirRef {
  fd: number;
  at: string;
  real: string;
}

/** Raised when a path stopped being what was checked (a symlink appeared, a directory moved). */
export class PathRaceError extends Error {
  constructor(
    readonly file: string,
    readonly found: string | undefined,
  ) {
    super(`${file} changed into or behind a symlink while it was being used`);
  }
}

/** Throws PathRaceError unless the descriptor's real path is inside `rootReal`. */
function verifyFd(fd: number, rootReal: string, expected: string): string {
  const real = fdPath(fd);
  if (real === undefined) return expected;
  if (!isInside(rootReal, real)) throw new PathRaceError(expected, real);
  return real;
}

function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    // already closed
  }
}

/** Opens a directory without following a symlink in its last component and checks where it really is. */
export function openDir(rootReal: string, real: string): DirRef {
  const fd = openSync(real, DIR_FLAGS);
  try {
    const actual = verifyFd(fd, rootReal, real);
    return { fd, at: FD_PATHS ? `/proc/self/fd/${fd}` : real, real: actual };
  } catch (e) {
    closeQuietly(fd);
    throw e;
  }
}

/** openDir with every failure as a specific tool error (SYMLINK_ESCAPE, NOT_FOUND, NOT_A_DIRECTORY…). */
export function openDirForTool(rootReal: string, real: string, rel: string): DirRef {
  try {
    return openDir(rootReal, real);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOTDIR')
      throw new ToolError('NOT_A_DIRECTORY', `${rel} is not a directory`, { path: rel });
    throw pathErrorToTool(e, rel) ?? e;
  }
}

/** Opens the subdirectory `name` of an open directory, never through a symlink. */
export function openDirAt(dir: DirRef, name: string): DirRef {
  const fd = openSync(at(dir, name), DIR_FLAGS);
  const real = path.join(dir.real, name);
  return { fd, at: FD_PATHS ? `/proc/self/fd/${fd}` : real, real };
}

export function closeDir(dir: DirRef): void {
  closeQuietly(dir.fd);
}

export interface OpenedFile {
  fd: number;
  stat: BigIntStats;
}

/** What a non-regular file is, in words for a model ("unix socket", "character device", …). */
export function fileKind(st: {
  isSocket(): boolean;
  isCharacterDevice(): boolean;
  isBlockDevice(): boolean;
  isFIFO(): boolean;
  isDirectory(): boolean;
  isSymbolicLink(): boolean;
}): string {
  if (st.isSocket()) return 'unix socket';
  if (st.isCharacterDevice()) return 'character device';
  if (st.isBlockDevice()) return 'block device';
  if (st.isFIFO()) return 'FIFO (named pipe)';
  if (st.isDirectory()) return 'directory';
  if (st.isSymbolicLink()) return 'symbolic link';
  return 'special file';
}

function notRegular(file: string, st: Parameters<typeof fileKind>[0]): Error {
  return Object.assign(new Error(`${file} is not a regular file`), {
    code: st.isDirectory() ? 'EISDIR' : 'ENOTREG',
    fileKind: fileKind(st),
  });
}

/**
 * Opens a regular file for reading and verifies the descriptor. A socket, device or FIFO is refused by its
 * lstat, never opened (opening a device can have effects of its own; a socket cannot be opened at all); if one
 * is swapped in after that look, the open cannot block (O_NONBLOCK) and fstat refuses it. A symlink in the last
 * component is ELOOP, and a file that turns out to be outside the workspace (a directory on its path swapped
 * for a symlink) is PathRaceError. The caller closes `fd`.
 */
export function openRegular(rootReal: string, file: string): OpenedFile {
  const look = lstatSync(file, { throwIfNoEntry: false });
  if (look && !look.isFile() && !look.isDirectory() && !look.isSymbolicLink()) throw notRegular(file, look);
  const fd = openSync(file, READ_FLAGS);
  try {
    verifyFd(fd, rootReal, file);
    const stat = fstatSync(fd, { bigint: true });
    if (!stat.isFile()) throw notRegular(file, stat);
    return { fd, stat };
  } catch (e) {
    closeQuietly(fd);
    throw e;
  }
}

/** openRegular with every failure as a specific tool error (IS_DIRECTORY, SYMLINK_ESCAPE, NOT_FOUND, …). */
export function openRegularForTool(rootReal: string, file: string, rel: string): OpenedFile {
  try {
    return openRegular(rootReal, file);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EISDIR')
      throw new ToolError(
        'IS_DIRECTORY',
        `${rel} is a directory`,
        { path: rel },
        { retry: `list_dir ${JSON.stringify({ path: rel })}` },
      );
    throw pathErrorToTool(e, rel) ?? e;
  }
}

/** The first `length` bytes of an open file (fewer if it is shorter), read synchronously. */
function readPrefix(fd: number, length: number): Buffer {
  const buf = Buffer.allocUnsafe(length);
  let got = 0;
  while (got < length) {
    const n = readSync(fd, buf, got, length - got, got);
    if (n === 0) break;
    got += n;
  }
  return buf.subarray(0, got);
}

/** Reads a small regular file (e.g. a .gitignore) through the same checks; undefined if absent or unusable. */
export function readSmallFile(file: string, maxBytes: number): Buffer | undefined {
  let fd: number;
  try {
    fd = openSync(file, READ_FLAGS);
  } catch {
    return undefined;
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile() || st.size > maxBytes) return undefined;
    return readPrefix(fd, st.size);
  } catch {
    return undefined;
  } finally {
    closeQuietly(fd);
  }
}

/**
 * Up to `maxBytes` of a workspace file named by any path (symlinks inside the workspace are followed, one
 * leading out is not): undefined when it is missing, outside, not a regular file, or unreadable.
 */
export function readWorkspaceFile(rootReal: string, abs: string, maxBytes: number): Buffer | undefined {
  let opened: OpenedFile;
  try {
    opened = openRegular(rootReal, realpathSync.native(abs));
  } catch {
    return undefined;
  }
  try {
    return readPrefix(opened.fd, Math.min(maxBytes, Number(opened.stat.size)));
  } catch {
    return undefined;
  } finally {
    closeQuietly(opened.fd);
  }
}

/**
 * A regular file's bytes, opened without following a last-component symlink and verified inside the
 * workspace on the descriptor; undefined when refused or unreadable.
 */
export function readRegularVerified(rootReal: string, file: string): Buffer | undefined {
  let opened: OpenedFile;
  try {
    opened = openRegular(rootReal, file);
  } catch {
    return undefined;
  }
  try {
    return readFileSync(opened.fd);
  } catch {
    return undefined;
  } finally {
    closeQuietly(opened.fd);
  }
}

/**
 * A specific tool error for a file-system failure on a workspace path (never INTERNAL_ERROR for what a path
 * can cause), or undefined when the error is not one of those.
 */
export function pathErrorToTool(e: unknown, rel: string): ToolError | undefined {
  if (e instanceof ToolError) return e;
  const kind = (e as { fileKind?: string })?.fileKind;
  if ((e as NodeJS.ErrnoException)?.code === 'ENOTREG' && kind) {
    return new ToolError(
      'INVALID_ARGUMENT',
      `${rel} is a ${kind}, not a regular file; only regular files can be read`,
      { path: rel, file_type: kind },
      { suggestion: 'Name a regular file; list_dir shows what each entry is.' },
    );
  }
  if (e instanceof PathRaceError) {
    return new ToolError(
      'SYMLINK_ESCAPE',
      `${rel}: a directory on its path was replaced by a symlink leading outside the workspace while it was being opened`,
      { path: rel },
      {
        suggestion: 'Symlinks out of the workspace are never followed; use a path whose target is inside it.',
      },
    );
  }
  return errnoToTool(e, rel);
}

/**
 * The directories one write operation touches, each opened by a no-follow walk from the root's descriptor and
 * kept open until `closeAll()`. Every create, link, rename and unlink names its file through one of them
 * (`path(dir, name)`), so nothing swapped into the tree meanwhile can redirect a write outside the workspace:
 * a symlink met on the walk is ELOOP/ENOTDIR, reported as PathRaceError.
 */
export class DirChain {
  private readonly dirs = new Map<string, DirRef>();

  constructor(private readonly rootReal: string) {}

  /** The open directory whose real path is `realDir` (inside the root). */
  get(realDir: string): DirRef {
    const known = this.dirs.get(realDir);
    if (known) return known;
    if (!isInside(this.rootReal, realDir)) throw new PathRaceError(realDir, undefined);
    let dir: DirRef;
    if (realDir === this.rootReal) dir = openDir(this.rootReal, this.rootReal);
    else {
      const parent = this.get(path.dirname(realDir));
      try {
        dir = openDirAt(parent, path.basename(realDir));
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        if (code === 'ELOOP' || code === 'ENOTDIR') throw new PathRaceError(realDir, code);
        throw e;
      }
    }
    this.dirs.set(realDir, dir);
    return dir;
  }

  /** A path for `name` inside `realDir` that resolves through the open descriptor. */
  path(realDir: string, name: string): string {
    return at(this.get(realDir), name);
  }

  /** Creates directory `realDir`; false when a directory already stands there. */
  mkdir(realDir: string, mode: number): boolean {
    const where = this.path(path.dirname(realDir), path.basename(realDir));
    try {
      mkdirSync(where, mode);
      return true;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST' || !lstatSync(where).isDirectory()) throw e;
      return false;
    }
  }

  /** Removes the empty directory `realDir`; throws when it is not empty or gone. */
  rmdir(realDir: string): void {
    rmdirSync(this.path(path.dirname(realDir), path.basename(realDir)));
    const open = this.dirs.get(realDir);
    if (open) {
      closeDir(open);
      this.dirs.delete(realDir);
    }
  }

  closeAll(): void {
    for (const d of this.dirs.values()) closeDir(d);
    this.dirs.clear();
  }
}
