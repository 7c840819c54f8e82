// Real temporary workspaces for tests: a directory tree written from a map of paths to contents, optionally
// a git repository. Removed when the test file's cleanup runs.
import { execFileSync } from 'node:child_process';
import {
  accessSync,
  constants,
  mkdirSync,
  mkdtempSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

export interface TempWorkspace {
  dir: string;
  write(rel: string, content: string | Buffer): string;
  cleanup(): void;
}

/** /dev/shm when this machine has it writable (a tmpfs: trees of 100,000s of files are made and removed in a
 *  third of the time), else the temporary directory. */
export function memoryDir(): string {
  try {
    if (!statSync('/dev/shm').isDirectory()) return tmpdir();
    accessSync('/dev/shm', constants.W_OK);
    return '/dev/shm';
  } catch {
    return tmpdir();
  }
}

/**
 * A temporary workspace with `files`; `git` makes it a repository; `inMemory` puts it on a tmpfs where there is
 * one (the limits tests' huge trees).
 */
export function makeWorkspace(
  files: Record<string, string | Buffer> = {},
  opts: { git?: boolean; inMemory?: boolean } = {},
): TempWorkspace {
  const dir = realpathSync(mkdtempSync(path.join(opts.inMemory ? memoryDir() : tmpdir(), 'wb-test-')));
  const write = (rel: string, content: string | Buffer) => {
    const abs = path.join(dir, rel);
    mkdirSync(path.dirname(abs), { recursive: true });
    writeFileSync(abs, content);
    return abs;
  };
  for (const [rel, content] of Object.entries(files)) write(rel, content);
  if (opts.git) git(dir, 'init', '-q', '-b', 'main');
  return { dir, write, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export function git(cwd: string, ...args: string[]): string {
  return execFileSync(
    'git',
    ['-c', 'user.name=test', '-c', 'user.email=test@localhost', '-c', 'commit.gpgsign=false', ...args],
    {
      cwd,
      encoding: 'utf8',
      env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: cwd },
    },
  );
}
