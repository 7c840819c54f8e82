// docs/tools.md#editing-files (atomic commit) and docs/design-notes.md#patch-failures: a failure part-way
// rolls every file back and leaves no temp or backup file; a file changed between matching and commit is
// PATCH_CONFLICT; OS write failures are PATCH_FAILED with errno and path; a failed rollback is
// PATCH_ROLLBACK_FAILED naming the backups. Failures are real file-system events, triggered at exact points
// through the committer's test hook.
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmdirSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ToolError } from '../../src/core/tool-error.js';
import { applyPatch, type ApplyOptions } from '../../src/patch/engine.js';
import { FileLocks } from '../../src/patch/locks.js';
import { checkRoot } from '../../src/workspace/paths.js';
import { callTool } from '../helpers/rpc.js';
import { startInProcess } from '../helpers/server.js';
import { mountTmpfs, unmountTmpfs } from '../helpers/tmpfs.js';
import { makeWorkspace, type TempWorkspace } from '../helpers/workspace.js';

const cleanups: Array<() => void | Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function workspace(files: Record<string, string>): TempWorkspace {
  const ws = makeWorkspace(files);
  cleanups.push(() => ws.cleanup());
  return ws;
}

function run(dir: string, patch: string, opts: ApplyOptions = {}) {
  const rc = checkRoot(dir, '/nonexistent-home');
  if (!rc.ok) throw new Error(rc.reason);
  return applyPatch({ root: rc.root, locks: new FileLocks() }, patch, opts);
}

async function failure(p: Promise<unknown>): Promise<ToolError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof ToolError) return e;
    throw e;
  }
  throw new Error('expected the patch to fail');
}

/** Every entry under dir, recursively, as sorted relative paths (directories end with /). */
function tree(dir: string): string[] {
  return (readdirSync(dir, { recursive: true, withFileTypes: true }) as import('node:fs').Dirent[])
    .map((d) => path.relative(dir, path.join(d.parentPath, d.name)) + (d.isDirectory() ? '/' : ''))
    .sort();
}

const threeFiles = () => ({ 'a.txt': 'a1\na2\n', 'b.txt': 'b1\nb2\n', 'c.txt': 'c1\nc2\n' });
const updateAll = [
  '*** Begin Patch',
  '*** Update File: a.txt',
  '-a1',
  '+A1',
  '*** Update File: b.txt',
  '-b1',
  '+B1',
  '*** Update File: c.txt',
  '-c1',
  '+C1',
  '*** End Patch',
].join('\n');

/** A 256 KiB tmpfs, unmounted after the test; undefined (the skip printed) without root. */
function tmpfs256(what: string): string | undefined {
  const dir = mkdtempSync(path.join(tmpdir(), 'wb-tmpfs-'));
  if (!mountTmpfs(dir, '256k', what)) {
    rmdirSync(dir);
    return undefined;
  }
  cleanups.push(() => unmountTmpfs(dir));
  return dir;
}

describe('rollback (docs/tools.md#editing-files: a failure part-way rolls every file back)', () => {
  it('the third file failing leaves the first two unchanged and no temp or backup files', async () => {
    const ws = workspace(threeFiles());
    const before = tree(ws.dir);
    const err = await failure(
      run(ws.dir, updateAll, {
        // A real failure at the third rename: its staged temp file vanishes.
        hooks: { beforeStep: (s) => (s.index === 2 && s.tmp ? unlinkSync(s.tmp) : undefined) },
      }),
    );
    expect(err.code).toBe('PATCH_FAILED');
    expect(err.details).toMatchObject({ path: 'c.txt', errno: 'ENOENT' });
    expect(err.message).toContain('every file was restored');
    expect(readFileSync(path.join(ws.dir, 'a.txt'), 'utf8')).toBe('a1\na2\n');
    expect(readFileSync(path.join(ws.dir, 'b.txt'), 'utf8')).toBe('b1\nb2\n');
    expect(readFileSync(path.join(ws.dir, 'c.txt'), 'utf8')).toBe('c1\nc2\n');
    expect(tree(ws.dir)).toEqual(before);
  });

  it('directories created for new files are removed again, deletes and moves are undone', async () => {
    const ws = workspace({ ...threeFiles(), 'gone.txt': 'gone\n', 'src/m.txt': 'moved\n' });
    const before = tree(ws.dir);
    const patch = [
      '*** Begin Patch',
      '*** Delete File: gone.txt',
      '*** Update File: src/m.txt',
      '*** Move to: dst/deeper/m.txt',
      '*** Update File: a.txt',
      '-a1',
      '+A1',
      '*** Add File: new/deep/c.txt',
      '+content',
      '*** Update File: b.txt',
      '-b1',
      '+B1',
      '*** End Patch',
    ].join('\n');
    // Steps: 0 create dst/deeper/m.txt, 1 remove src/m.txt ... the add of new/deep/c.txt is step 4 of 6.
    const err = await failure(
      run(ws.dir, patch, {
        hooks: { beforeStep: (s) => (s.rel === 'new/deep/c.txt' && s.tmp ? unlinkSync(s.tmp) : undefined) },
      }),
    );
    expect(err.code).toBe('PATCH_FAILED');
    expect(err.details).toMatchObject({ path: 'new/deep/c.txt', errno: 'ENOENT' });
    expect(tree(ws.dir)).toEqual(before);
    expect(readFileSync(path.join(ws.dir, 'gone.txt'), 'utf8')).toBe('gone\n');
    expect(readFileSync(path.join(ws.dir, 'src/m.txt'), 'utf8')).toBe('moved\n');
    expect(readFileSync(path.join(ws.dir, 'a.txt'), 'utf8')).toBe('a1\na2\n');
  });
});

describe('baseline recheck (docs/tools.md#editing-files: PATCH_CONFLICT, retryable)', () => {
  it('a file changed by another writer between match and commit is a conflict, and nothing is written', async () => {
    const ws = workspace(threeFiles());
    const b = path.join(ws.dir, 'b.txt');
    const err = await failure(
      run(ws.dir, updateAll, {
        hooks: {
          beforeStep: (s) => (s.index === 1 ? writeFileSync(b, 'b1\nb2\nb3 from an editor\n') : undefined),
        },
      }),
    );
    expect(err.code).toBe('PATCH_CONFLICT');
    expect(err.retryable).toBe(true);
    expect(err.details).toMatchObject({ path: 'b.txt' });
    expect(readFileSync(path.join(ws.dir, 'a.txt'), 'utf8')).toBe('a1\na2\n');
    expect(readFileSync(b, 'utf8')).toBe('b1\nb2\nb3 from an editor\n');
    expect(tree(ws.dir)).toEqual(['a.txt', 'b.txt', 'c.txt']);
    // Retrying the same call matches against the new content: the other writer's line survives.
    await run(ws.dir, updateAll);
    expect(readFileSync(b, 'utf8')).toBe('B1\nb2\nb3 from an editor\n');
  });

  it('a permission change in between is a conflict too', async () => {
    const ws = workspace(threeFiles());
    const err = await failure(
      run(ws.dir, updateAll, {
        hooks: {
          beforeStep: (s) => (s.index === 2 ? chmodSync(path.join(ws.dir, 'c.txt'), 0o600) : undefined),
        },
      }),
    );
    expect(err.code).toBe('PATCH_CONFLICT');
    expect(err.details.reason).toContain('permissions');
    expect(readFileSync(path.join(ws.dir, 'a.txt'), 'utf8')).toBe('a1\na2\n');
  });

  it('a file created at an Add destination in between is a conflict, never overwritten', async () => {
    const ws = workspace({});
    const patch = '*** Begin Patch\n*** Add File: fresh.txt\n+mine\n*** End Patch\n';
    const err = await failure(
      run(ws.dir, patch, {
        hooks: { beforeStep: () => writeFileSync(path.join(ws.dir, 'fresh.txt'), 'theirs\n') },
      }),
    );
    expect(err.code).toBe('PATCH_CONFLICT');
    expect(readFileSync(path.join(ws.dir, 'fresh.txt'), 'utf8')).toBe('theirs\n');
    expect(tree(ws.dir)).toEqual(['fresh.txt']);
  });
});

describe('OS write failures (docs/design-notes.md#patch-failures, docs/design-notes.md#tests: a real tmpfs)', () => {
  it('disk full: PATCH_FAILED with errno ENOSPC and the path, tree unchanged, no temp files', async () => {
    const dir = tmpfs256('the disk-full patch');
    if (!dir) return;
    writeFileSync(path.join(dir, 'small.txt'), 'one\ntwo\n');
    const srv = await startInProcess({ workspace: dir });
    cleanups.push(() => srv.close());
    const big = Array.from({ length: 6000 }, (_, i) => `+${'x'.repeat(60)} ${i}`).join('\n');
    const patch = `*** Begin Patch\n*** Update File: small.txt\n-one\n+ONE\n*** Add File: sub/big.txt\n${big}\n*** End Patch\n`;
    const r = await callTool(srv.url, 'apply_patch', { patch });
    expect(r.isError, JSON.stringify(r.structuredContent)).toBe(true);
    // The files' temp copies are written side by side: on a busy machine either may be the one that finds
    // the disk full once the other has taken the space. Whichever it is must be named.
    expect(r.structuredContent.error).toMatchObject({
      code: 'PATCH_FAILED',
      details: { errno: 'ENOSPC', path: expect.stringMatching(/^(sub\/big\.txt|small\.txt)$/) },
    });
    expect(r.content[0]?.text).toMatch(/^PATCH_FAILED: writing (sub\/big\.txt|small\.txt) failed: ENOSPC/);
    expect(tree(dir)).toEqual(['small.txt']);
    expect(readFileSync(path.join(dir, 'small.txt'), 'utf8')).toBe('one\ntwo\n');
  });

  it('read-only file system: PATCH_FAILED with errno EROFS', async () => {
    const dir = tmpfs256('the read-only file system patch');
    if (!dir) return;
    writeFileSync(path.join(dir, 'small.txt'), 'one\ntwo\n');
    execFileSync('mount', ['-o', 'remount,ro', dir]);
    const srv = await startInProcess({ workspace: dir });
    cleanups.push(() => srv.close());
    const r = await callTool(srv.url, 'apply_patch', {
      patch: '*** Begin Patch\n*** Update File: small.txt\n-one\n+ONE\n*** End Patch\n',
    });
    expect(r.structuredContent.error).toMatchObject({
      code: 'PATCH_FAILED',
      retryable: false,
      details: { errno: 'EROFS', path: 'small.txt' },
    });
    expect(readFileSync(path.join(dir, 'small.txt'), 'utf8')).toBe('one\ntwo\n');
  });

  it('a rollback that itself fails is PATCH_ROLLBACK_FAILED, naming backups that hold the originals', async () => {
    const dir = tmpfs256('the failing rollback');
    if (!dir) return;
    for (const [name, content] of Object.entries(threeFiles())) writeFileSync(path.join(dir, name), content);
    // Before the third step the file system turns read-only: the step fails, and so does undoing the first two.
    const err = await failure(
      run(dir, updateAll, {
        hooks: {
          beforeStep: (s) => {
            if (s.index === 2) execFileSync('mount', ['-o', 'remount,ro', dir]);
          },
        },
      }),
    );
    execFileSync('mount', ['-o', 'remount,rw', dir]);
    expect(err.code).toBe('PATCH_ROLLBACK_FAILED');
    expect(err.details.cause).toMatchObject({
      code: 'PATCH_FAILED',
      details: { errno: 'EROFS', path: 'c.txt' },
    });
    const backups = err.details.backups as Array<{ path: string; backup: string; errno: string }>;
    expect(backups.map((b) => b.path).sort()).toEqual(['a.txt', 'b.txt']);
    for (const b of backups) {
      expect(b.errno).toBe('EROFS');
      expect(readFileSync(path.join(dir, b.backup), 'utf8')).toBe(threeFiles()[b.path as 'a.txt']);
    }
    expect(err.hints.suggestion).toContain('mv');
  });
});

describe('new files and modes (docs/tools.md#editing-files: modes preserved, new files 0644)', () => {
  it('new files are 0644 whatever the umask; updates keep 0600; moves keep the source mode', async () => {
    const ws = workspace({ 'secret.txt': 's\n', 'run.sh': 'echo\n' });
    chmodSync(path.join(ws.dir, 'secret.txt'), 0o600);
    chmodSync(path.join(ws.dir, 'run.sh'), 0o750);
    const old = process.umask(0o077);
    try {
      await run(
        ws.dir,
        '*** Begin Patch\n*** Add File: new.txt\n+n\n*** Update File: secret.txt\n-s\n+S\n*** Update File: run.sh\n*** Move to: bin/run.sh\n-echo\n+echo hi\n*** End Patch',
      );
    } finally {
      process.umask(old);
    }
    const mode = (p: string) => statSync(path.join(ws.dir, p)).mode & 0o7777;
    expect(mode('new.txt')).toBe(0o644);
    expect(mode('secret.txt')).toBe(0o600);
    expect(mode('bin/run.sh')).toBe(0o750);
    mkdirSync(path.join(ws.dir, 'unused'));
    expect(tree(ws.dir)).toEqual(['bin/', 'bin/run.sh', 'new.txt', 'secret.txt', 'unused/']);
  });
});
