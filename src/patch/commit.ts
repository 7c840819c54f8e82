// The atomic committer (docs/tools.md#editing-files): every new content goes to an fsynced temp file in its
// target directory first; then, file by file, the baseline (content + mode) is rechecked and the temp renamed
// into place, the replaced original kept as a hard-link backup until the whole patch is in. Any failure rolls
// every committed file and created directory back; a failed rollback names the backups it leaves behind.
// Every file-system call names its file through a directory descriptor of a DirChain (workspace/confined-fs):
// a directory swapped for a symlink at any moment makes the commit fail and roll back, never write outside.
import { renameSync, unlinkSync } from 'node:fs';
import { unlink } from 'node:fs/promises';
import path from 'node:path';
import { ToolError } from '../core/tool-error.js';
import { pausePoint } from '../core/pause.js';
import { isInside } from '../workspace/paths.js';
import { DirChain, PathRaceError } from '../workspace/confined-fs.js';
import type { Logger } from '../core/log.js';
import { linkNoClobber, probe, readSnapshot, siblingName, writeTemp } from './fs-safe.js';

/**
 * What a file was when it was matched. The bytes themselves, not a hash of them: comparing is exact and
 * cheaper than hashing twice, and the engine holds these bytes anyway until the commit is done.
 */
export interface Baseline {
  bytes: Buffer;
  mode: number;
}

interface StepBase {
  /** Workspace-relative path for messages. */
  rel: string;
  /** Real path of the parent directory (may not exist yet for `create`). */
  dir: string;
  name: string;
}

export type CommitStep =
  | (StepBase & { kind: 'replace'; content: Buffer; mode: number; baseline: Baseline })
  | (StepBase & { kind: 'create'; content: Buffer; mode: number; missingDirs: string[] })
  | (StepBase & { kind: 'remove'; baseline: Baseline });

export interface StepInfo {
  index: number;
  rel: string;
  file: string;
  tmp?: string;
}

/** Test-only seams (no mocks): run real file-system actions at exact points of a commit. */
export interface CommitHooks {
  beforeStep?(info: StepInfo): Promise<void> | void;
}

interface Done {
  step: CommitStep;
  file: string;
  backup?: string;
  undo: () => void;
}

const STAGE_PARALLELISM = 8;

export interface CommitOptions {
  /** Real path of the workspace root: directories emptied by deletes and moves are removed up to it. */
  root: string;
  hooks?: CommitHooks;
  log?: Logger;
}

export async function commitSteps(steps: readonly CommitStep[], opts: CommitOptions): Promise<void> {
  await new Commit(steps, opts).run();
}

class Commit {
  private readonly temps: string[] = [];
  private readonly tmpOf = new Map<CommitStep, string>();
  private readonly createdDirs: string[] = [];
  private readonly done: Done[] = [];
  private current: CommitStep | undefined;

  private readonly hooks: CommitHooks | undefined;
  private readonly log: Logger | undefined;
  private readonly dirs: DirChain;

  constructor(
    private readonly steps: readonly CommitStep[],
    private readonly opts: CommitOptions,
  ) {
    this.hooks = opts.hooks;
    this.log = opts.log;
    this.dirs = new DirChain(opts.root);
  }

  async run(): Promise<void> {
    try {
      try {
        await this.stage();
        pausePoint('patch.before-rename');
        for (let i = 0; i < this.steps.length; i++) await this.apply(i);
      } catch (e) {
        this.rollback(e);
      }
      await this.finish();
    } finally {
      this.dirs.closeAll();
    }
  }

  private async stage(): Promise<void> {
    for (const step of this.steps) {
      this.current = step;
      if (step.kind === 'create') this.makeDirs(step.missingDirs);
    }
    const writes = this.steps.filter(
      (s): s is Exclude<CommitStep, { kind: 'remove' }> => s.kind !== 'remove',
    );
    for (let i = 0; i < writes.length; i += STAGE_PARALLELISM) {
      const batch = writes.slice(i, i + STAGE_PARALLELISM);
      // allSettled: a failure must not start the rollback while other temp files are still being written.
      const results = await Promise.allSettled(
        batch.map(async (step) =>
          this.tmpOf.set(
            step,
            await writeTemp(this.dirs.get(step.dir), step.name, step.content, step.mode, this.temps),
          ),
        ),
      );
      const failed = results.findIndex((r) => r.status === 'rejected');
      if (failed >= 0) {
        this.current = batch[failed];
        throw (results[failed] as PromiseRejectedResult).reason;
      }
    }
  }

  private makeDirs(dirs: readonly string[]): void {
    for (const dir of dirs) if (this.dirs.mkdir(dir, 0o755)) this.createdDirs.push(dir);
  }

  private async apply(index: number): Promise<void> {
    if (index === 1) pausePoint('patch.between-renames');
    const step = this.steps[index] as CommitStep;
    this.current = step;
    const tmp = this.tmpOf.get(step);
    await this.hooks?.beforeStep?.({ index, rel: step.rel, file: path.join(step.dir, step.name), tmp });
    const file = this.dirs.path(step.dir, step.name);
    if (step.kind === 'create') return this.create(step, file, tmp as string);
    this.recheck(step, file);
    // The original stays reachable under a backup name until the whole patch is in: rollback is one rename,
    // and freeing the old inode (slow on some file systems) happens later, off the event loop.
    let backup: string | undefined = this.dirs.path(step.dir, siblingName(step.name, 'bak'));
    if (step.kind === 'replace') {
      if (linkNoClobber(file, backup) === 'unsupported') {
        // No hard links here: only the last step can do without a backup, since nothing after it can fail.
        if (index !== this.steps.length - 1)
          throw Object.assign(new Error('no hard links'), { code: 'ENOTSUP', syscall: 'link' });
        backup = undefined;
      }
      try {
        renameSync(tmp as string, file);
      } catch (e) {
        if (backup) tryUnlink(backup, this.log);
        throw e;
      }
      this.forgetTemp(tmp as string);
    } else renameSync(file, backup);
    this.done.push({ step, file, backup, undo: () => renameSync(backup as string, file) });
  }

  private create(step: CommitStep, file: string, tmp: string): void {
    if (probe(file).kind !== 'missing')
      throw conflict(step.rel, 'a file was created at this path by another writer');
    if (linkNoClobber(tmp, file) === 'linked') unlinkSync(tmp);
    else renameSync(tmp, file);
    this.forgetTemp(tmp);
    this.done.push({ step, file, undo: () => unlinkSync(file) });
  }

  private recheck(step: CommitStep & { baseline: Baseline }, file: string): void {
    const p = probe(file);
    if (p.kind !== 'file')
      throw conflict(step.rel, p.kind === 'missing' ? 'it was deleted' : `it was replaced by a ${p.kind}`);
    if (p.stat.size !== step.baseline.bytes.length) throw conflict(step.rel, 'its content changed');
    const snap = readSnapshot(file, path.join(step.dir, step.name));
    if (!snap.buf.equals(step.baseline.bytes)) throw conflict(step.rel, 'its content changed');
    if (snap.mode !== step.baseline.mode) throw conflict(step.rel, 'its permissions changed');
  }

  private forgetTemp(tmp: string): void {
    const i = this.temps.indexOf(tmp);
    if (i >= 0) this.temps.splice(i, 1);
  }

  /** Undoes everything in reverse and throws: the original error, or PATCH_ROLLBACK_FAILED. */
  private rollback(cause: unknown): never {
    const failed: Array<{ path: string; backup?: string; errno?: string }> = [];
    for (const d of [...this.done].reverse()) {
      try {
        d.undo();
        pausePoint('patch.during-rollback');
      } catch (e) {
        failed.push({
          path: d.step.rel,
          backup: d.backup ? relBackup(d) : undefined,
          errno: (e as NodeJS.ErrnoException).code,
        });
      }
    }
    for (const tmp of this.temps) tryUnlink(tmp, this.log);
    for (const dir of [...this.createdDirs].reverse()) {
      try {
        this.dirs.rmdir(dir);
      } catch {
        // Not empty (another writer put something there) or already gone: leave it.
      }
    }
    const error = toToolError(cause, this.current, this.log);
    if (failed.length === 0) throw error;
    throw new ToolError(
      'PATCH_ROLLBACK_FAILED',
      `the patch failed (${error.code}: ${error.message}) and ${failed.length} file(s) could not be restored; ` +
        'their original content is in the backup files listed in details.backups',
      { cause: { code: error.code, message: error.message, details: error.details }, backups: failed },
      {
        suggestion:
          'Restore each file from its backup (exec_command mv BACKUP PATH), then check the tree with git_status.',
      },
    );
  }

  /**
   * Frees the backups and removes directories left empty. No directory fsync: each new content was fsynced
   * before its rename and the rename is atomic, so a power loss can only bring back the old file, never a
   * torn one; the rename itself reaches the disk with the next journal commit. Measured here, waiting for a
   * directory fsync cost ~0.2 ms of a one-line patch's ~1.5 ms, with no gain in atomicity.
   */
  private async finish(): Promise<void> {
    const unlinkBackups = (kind: CommitStep['kind']) =>
      this.done
        .filter((d) => d.backup && d.step.kind === kind)
        .map((d) => unlinkQuietly(d.backup as string, this.log));
    // As `git apply` does: a directory left empty by a delete or move goes too (never the root itself).
    await Promise.all(unlinkBackups('remove'));
    for (const d of this.done) if (d.step.kind === 'remove') this.removeEmptyParents(d.step.dir);
    // Replaced originals are freed on the thread pool: freeing blocks can be slow (discard), not our caller's wait.
    await Promise.all(unlinkBackups('replace'));
  }

  private removeEmptyParents(dir: string): void {
    for (let cur = dir; isInside(this.opts.root, cur) && cur !== this.opts.root; cur = path.dirname(cur)) {
      try {
        this.dirs.rmdir(cur);
      } catch {
        return;
      }
    }
  }
}

function relBackup(d: Done): string {
  return path.posix.join(path.posix.dirname(d.step.rel), path.basename(d.backup as string));
}

async function unlinkQuietly(file: string, log: Logger | undefined): Promise<void> {
  try {
    await unlink(file);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT')
      log?.warn('apply_patch could not remove a backup', { file, error: String(e) });
  }
}

function tryUnlink(file: string, log: Logger | undefined): void {
  try {
    unlinkSync(file);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT')
      log?.warn('apply_patch could not remove a temp file', { file, error: String(e) });
  }
}

function conflict(rel: string, why: string): ToolError {
  return new ToolError(
    'PATCH_CONFLICT',
    `${rel} changed on disk while the patch was being applied (${why}); nothing was written`,
    { path: rel, reason: why },
    {
      suggestion:
        'Send the same apply_patch call again: it is matched against the current content. Re-read the file first if the change was not yours.',
    },
  );
}

const ERRNO_TEXT: Record<string, string> = {
  ENOSPC: 'no space left on the device',
  EDQUOT: 'disk quota exceeded',
  EFBIG: 'the file is too large for this file system',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EROFS: 'the file system is read-only',
  ENOTDIR: 'a parent path is a file, not a directory',
  ENAMETOOLONG: 'a file name is too long',
  ENOENT: 'a file or directory disappeared while writing',
  EEXIST: 'a file appeared at the destination while writing',
  EIO: 'input/output error',
};

function toToolError(e: unknown, step: CommitStep | undefined, log: Logger | undefined): ToolError {
  if (e instanceof ToolError) return e;
  const rel = step?.rel ?? '';
  if (e instanceof PathRaceError) {
    return new ToolError(
      'SYMLINK_ESCAPE',
      `${rel}: a directory on its path was replaced by a symlink while writing; nothing was written`,
      { path: rel },
      {
        suggestion:
          'Patches never write through symlinks; check the directory with list_dir and patch the real path.',
      },
    );
  }
  const err = e as NodeJS.ErrnoException;
  if (typeof err?.code === 'string' && /^E[A-Z]+$/.test(err.code)) {
    if (err.code === 'EEXIST' && step?.kind === 'create')
      return conflict(rel, 'a file was created at this path by another writer');
    const what = ERRNO_TEXT[err.code] ?? err.message;
    return new ToolError(
      'PATCH_FAILED',
      `writing ${rel} failed: ${err.code} (${what}); every file was restored, nothing was changed`,
      {
        path: rel,
        errno: err.code,
        syscall: err.syscall,
      },
      { suggestion: osSuggestion(err.code) },
    );
  }
  log?.error('apply_patch failed while writing', { path: rel, error: String((e as Error)?.stack ?? e) });
  return new ToolError(
    'INTERNAL_ERROR',
    `writing ${rel} failed unexpectedly; every file was restored, nothing was changed`,
    { path: rel },
    {
      suggestion: 'Try once more; if it fails again, report it with server_info output.',
    },
  );
}

function osSuggestion(code: string): string {
  if (code === 'ENOSPC' || code === 'EDQUOT')
    return 'Free disk space in the workspace, then send the same patch again.';
  if (code === 'EROFS' || code === 'EACCES' || code === 'EPERM')
    return 'The file system refuses writes there; tell the user, or patch another path.';
  return 'Check the paths with list_dir, then send the patch again.';
}
