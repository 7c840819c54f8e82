// A real tmpfs for tests of what the OS refuses (a full disk, a directory that will not go). Mounting needs
// root: elsewhere the case is skipped with the reason printed; under CI=true (CI runs as root) a missing mount
// is a failure, so CI never skips it.
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmdirSync } from 'node:fs';

/** Mounts a tmpfs of `size` (e.g. `1m`) on `dir` (created): true; or prints why not and returns false. */
export function mountTmpfs(dir: string, size: string, what: string): boolean {
  let why: string | undefined;
  if (process.getuid?.() !== 0) why = 'not root: mounting a tmpfs needs root';
  else {
    mkdirSync(dir, { recursive: true });
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size},mode=0755`, 'tmpfs', dir], { stdio: 'pipe' });
    } catch (e) {
      why = `mount -t tmpfs failed: ${String((e as { stderr?: Buffer }).stderr ?? e).trim()}`;
    }
  }
  if (!why) return true;
  if (process.env.CI === 'true') throw new Error(`${what} must run under CI=true: ${why}`);
  console.log(`SKIP ${what}: ${why}`);
  return false;
}

/** Unmounts (lazily: a process may still hold it) and removes the mount point. */
export function unmountTmpfs(dir: string): void {
  execFileSync('umount', ['-l', dir]);
  rmdirSync(dir);
}
