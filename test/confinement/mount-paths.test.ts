// Which host directories a command's sandbox hides rests on one inside-check of paths
// (src/process/runtime-dir.ts `within`, used by sandbox/host-view.ts and sandbox/sandbox-mounts.ts;
// docs/security-model.md). It compares real paths as strings: a name that begins with two dots is a child like
// any other, which an inside-check built on path.relative got wrong (it read `..proj` as "above").
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createRuntimeDirs,
  removeRuntimeDirs,
  within,
  type RuntimeDirs,
} from '../../src/process/runtime-dir.js';
import { mountArgs } from '../../src/process/sandbox/sandbox-mounts.js';

/** Debian's and most systems' other temporary directory, not under /tmp. */
const RUNTIME_PARENT = '/var/tmp';

describe('within: a real path is its parent or below it', () => {
  it.each([
    ['/', '/', true],
    ['/', '/etc', true],
    ['/a/b', '/a/b', true],
    ['/a/b', '/a/b/c', true],
    ['/a/b', '/a/b/..proj', true],
    ['/a/b', '/a/bc', false],
    ['/a/b', '/a', false],
    ['/a/b/c', '/a/b', false],
    ['/a/b', '/x/a/b', false],
  ])('within(%s, %s) is %s', (parent, child, inside) => {
    expect(within(parent, child)).toBe(inside);
  });
});

describe('the mounts of a workspace whose name begins with two dots', () => {
  let workspace: string;
  let dirs: RuntimeDirs;
  let runtimeRoot: string;
  beforeAll(() => {
    // A workspace under /tmp gets an empty read-only /tmp, not the instance's private one bound over it. This
    // one lies directly under /tmp, so that path.relative('/tmp', it) begins with the two dots.
    workspace = path.join(realpathSync('/tmp'), `..wb-mount-${randomBytes(6).toString('hex')}`);
    mkdirSync(workspace);
    // The runtime directory outside /tmp, so that only the workspace decides.
    runtimeRoot = mkdtempSync(path.join(RUNTIME_PARENT, 'wb-mount-rt-'));
    dirs = createRuntimeDirs({ configured: runtimeRoot }, workspace);
  });
  afterAll(() => {
    removeRuntimeDirs(dirs);
    rmSync(runtimeRoot, { recursive: true, force: true });
    rmSync(workspace, { recursive: true, force: true });
  });

  it('counts it inside /tmp: /tmp is emptied, the workspace bound back writable', () => {
    const a = mountArgs({
      mode: 'trusted',
      requested: 'auto',
      pathVar: '/usr/bin:/bin',
      workspaceReal: workspace,
      dirs,
      privateFiles: [],
      seccompFile: undefined,
    }).join(' ');
    expect(a).toContain('--tmpfs /tmp ');
    expect(a).not.toContain(`--bind ${dirs.tmp} /tmp`);
    expect(a).toContain(`--bind ${workspace} ${workspace}`);
  });
});
