// The per-user state directory: `<root>/<workspace id>/`, where <root> is SERVICE_STATE_DIR or
// $XDG_STATE_HOME/workbench-mcp (else ~/.local/state/workbench-mcp), holding what must survive a restart — a
// generated bearer token, the OAuth signing key, OAuth grants (docs/design-notes.md#kept-credentials). Treated
// like the runtime directory: both directories must be real directories (not symlinks) owned by this user and
// writable by no one else, and their parent must not let others rename them; files are opened without
// following symlinks, must be ours and private (0600), and are written atomically (a temporary file, fsync,
// then link or rename). Nothing here prints a secret.
import { createHash } from 'node:crypto';
import {
  closeSync,
  constants,
  fchmodSync,
  fstatSync,
  fsyncSync,
  linkSync,
  lstatSync,
  mkdirSync,
  openSync,
  readSync,
  realpathSync,
  renameSync,
  statSync,
  unlinkSync,
  writeSync,
  type Stats,
} from 'node:fs';
import path from 'node:path';
import type { StateDirChoice } from '../config/load.js';
import { randomHex } from '../core/random.js';

/** A state directory that cannot be used safely: the server refuses to start (exit 2) with this message. */
export class StateDirError extends Error {}

/** The usable directory of one workspace. */
export interface KeptState {
  /** `<root>/<workspace id>`. */
  dir: string;
  /** What chose the root (SERVICE_STATE_DIR, XDG_STATE_HOME, HOME), for messages. */
  from: string;
}

export type StateOpen =
  | { kind: 'on'; state: KeptState }
  /** SERVICE_STATE_DIR=off. */
  | { kind: 'off' }
  /** The default location cannot be made (no home directory, a read-only file system): nothing is kept. */
  | { kind: 'unavailable'; reason: string };

const MAX_FILE_BYTES = 1 << 20;
const S_IWGRP_IWOTH = 0o022;
const S_ISVTX = 0o1000;

function euid(): number {
  return process.geteuid?.() ?? 0;
}

/** The directory name of a workspace: the first 16 hex digits of SHA-256 of its real path. */
export function workspaceId(workspaceReal: string): string {
  return createHash('sha256').update(workspaceReal).digest('hex').slice(0, 16);
}

function lstat(p: string): Stats | undefined {
  try {
    return lstatSync(p);
  } catch {
    return undefined;
  }
}

const FIX = 'remove it, or set SERVICE_STATE_DIR to a directory only you can write (or off to keep nothing)';

/** `dir` must be a real directory of ours that no one else can write. */
function checkOwnDir(dir: string, uid: number): void {
  const st = lstat(dir);
  if (!st) throw new StateDirError(`state directory ${dir} vanished while it was being set up`);
  if (st.isSymbolicLink()) throw new StateDirError(`state directory ${dir} is a symbolic link; ${FIX}`);
  if (!st.isDirectory()) throw new StateDirError(`state directory ${dir} is not a directory; ${FIX}`);
  if (st.uid !== uid)
    throw new StateDirError(
      `state directory ${dir} belongs to uid ${st.uid}, not to you (uid ${uid}); ${FIX}`,
    );
  if (st.mode & S_IWGRP_IWOTH)
    throw new StateDirError(
      `state directory ${dir} is writable by other users (mode ${(st.mode & 0o7777).toString(8)}); ${FIX}`,
    );
}

/** The parent may be shared, but then others must not be able to rename our directory in it (sticky). */
function checkParent(dir: string, uid: number): void {
  const st = statSync(dir);
  if ((st.mode & S_IWGRP_IWOTH) !== 0 && !(st.mode & S_ISVTX) && st.uid !== uid && st.uid !== 0)
    throw new StateDirError(
      `${dir} is writable by other users and not sticky, so they could replace the state directory in it; set SERVICE_STATE_DIR to a directory only you can write`,
    );
}

function makeDir(dir: string): void {
  try {
    mkdirSync(dir, { mode: 0o700 });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
  }
}

/**
 * Opens (creating if needed) the state directory of the workspace whose real path is `workspaceReal`.
 * Unsafe directories throw StateDirError; a default location that cannot be created is `unavailable`; a
 * configured one that cannot be created throws too (the user asked for it).
 */
export function openStateDir(choice: StateDirChoice | undefined, workspaceReal: string): StateOpen {
  if (!choice) return { kind: 'off' };
  const uid = euid();
  if (choice.isDefault && choice.base && !statOk(choice.base))
    return { kind: 'unavailable', reason: `${choice.from} ${choice.base} is not a directory` };
  const root = choice.dir;
  try {
    // Parents as the XDG spec asks (0700); the last two levels are ours and checked below.
    mkdirSync(path.dirname(root), { recursive: true, mode: 0o700 });
    makeDir(root);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? String(e);
    if (choice.isDefault) return { kind: 'unavailable', reason: `${root} cannot be created (${code})` };
    throw new StateDirError(`${choice.from} ${root} cannot be created (${code})`);
  }
  checkParent(realpathSync(path.dirname(root)), uid);
  checkOwnDir(root, uid);
  const dir = path.join(root, workspaceId(workspaceReal));
  try {
    makeDir(dir);
  } catch (e) {
    throw new StateDirError(
      `state directory ${dir} cannot be created (${(e as NodeJS.ErrnoException).code ?? e})`,
    );
  }
  checkOwnDir(dir, uid);
  const state = { dir, from: choice.from };
  // Which workspace this directory belongs to, for people looking at ~/.local/state (not a secret).
  if (readKept(state, WORKSPACE_FILE) !== workspaceReal + '\n')
    writeKept(state, WORKSPACE_FILE, workspaceReal + '\n', { replace: true });
  return { kind: 'on', state };
}

/**
 * The state directory of a workspace when it exists already, checked like openStateDir's, without creating
 * anything (`doctor` looks for a kept token; it must not leave directories behind).
 */
export function peekStateDir(
  choice: StateDirChoice | undefined,
  workspaceReal: string,
): KeptState | undefined {
  if (!choice) return undefined;
  const dir = path.join(choice.dir, workspaceId(workspaceReal));
  if (!lstat(dir)) return undefined;
  const uid = euid();
  checkOwnDir(choice.dir, uid);
  checkOwnDir(dir, uid);
  return { dir, from: choice.from };
}

function statOk(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

export const WORKSPACE_FILE = 'workspace';

/**
 * The text of a kept file, or undefined when it does not exist. A file that is a symlink, not a regular file,
 * not ours, or readable or writable by others throws StateDirError (a secret others could read is no secret).
 */
export function readKept(state: KeptState, name: string): string | undefined {
  const file = path.join(state.dir, name);
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    if (code === 'ELOOP') throw new StateDirError(`${file} is a symbolic link; remove it`);
    throw new StateDirError(`${file} cannot be read (${code ?? e})`);
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw new StateDirError(`${file} is not a regular file; remove it`);
    if (st.uid !== euid()) throw new StateDirError(`${file} belongs to uid ${st.uid}, not to you; remove it`);
    if (st.mode & 0o077)
      throw new StateDirError(
        `${file} can be read or written by other users (mode ${(st.mode & 0o777).toString(8)}); remove it so a new one is made`,
      );
    if (st.size > MAX_FILE_BYTES) throw new StateDirError(`${file} is larger than 1 MiB; remove it`);
    const buf = Buffer.alloc(st.size);
    let got = 0;
    while (got < buf.length) {
      const n = readSync(fd, buf, got, buf.length - got, got);
      if (n === 0) break;
      got += n;
    }
    return buf.subarray(0, got).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

/**
 * Writes a kept file atomically with mode 0600: a temporary file beside it, fsync, then `rename` over the old
 * one (`replace`) or `link` (create only: false when the file exists already, e.g. made by a server starting at
 * the same moment). The directory is fsynced afterwards.
 */
export function writeKept(state: KeptState, name: string, text: string, o: { replace: boolean }): boolean {
  const file = path.join(state.dir, name);
  const tmp = path.join(state.dir, `.${name}.${process.pid}.${randomHex(6)}.tmp`);
  const fd = openSync(
    tmp,
    constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
    0o600,
  );
  try {
    fchmodSync(fd, 0o600);
    const data = Buffer.from(text, 'utf8');
    let done = 0;
    while (done < data.length) done += writeSync(fd, data, done);
    fsyncSync(fd);
  } catch (e) {
    closeSync(fd);
    unlinkSync(tmp);
    throw e;
  }
  closeSync(fd);
  let written = true;
  try {
    if (o.replace) renameSync(tmp, file);
    else {
      try {
        linkSync(tmp, file);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
        written = false;
      }
      unlinkSync(tmp);
    }
  } catch (e) {
    try {
      unlinkSync(tmp);
    } catch {
      /* already renamed or gone */
    }
    throw new StateDirError(`${file} cannot be written (${(e as NodeJS.ErrnoException).code ?? e})`);
  }
  syncDir(state.dir);
  return written;
}

/** Removes a kept file; absent is fine. */
export function removeKept(state: KeptState, name: string): void {
  try {
    unlinkSync(path.join(state.dir, name));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
  syncDir(state.dir);
}

function syncDir(dir: string): void {
  try {
    const fd = openSync(dir, constants.O_RDONLY | constants.O_DIRECTORY);
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch {
    /* a file system that cannot fsync a directory: the rename itself is still atomic */
  }
}
