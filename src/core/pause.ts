// Named pause points for crash and race tests (docs/design-notes.md#pause-points): inert unless WB_TEST_PAUSE
// names points (read once by config/, installed by cli/serve.ts or by a test child through setPausePoints). An
// armed point writes `wb-test-pause <point>` to stderr and blocks the whole process synchronously until it is
// killed — or, when WB_TEST_PAUSE_RESUME names a file, until that file appears; the file is then removed, so
// the next hit of an armed point pauses again. Unset, a point costs one branch.
import { existsSync, rmSync, writeSync } from 'node:fs';

export const PAUSE_POINTS = [
  /** Every temp file of a patch written and fsynced, before the first rename. */
  'patch.before-rename',
  /** The first step of a patch applied, before the second. */
  'patch.between-renames',
  /** A patch failed; after each undo of its rollback (the first hit: exactly one step undone). */
  'patch.during-rollback',
  /** A tool's path argument resolved and checked, before anything is opened (symlink-swap race tests). */
  'path.resolved',
  /** A new proxy relay listens on its staged path, before it is renamed onto the proxy socket's path. */
  'proxy.relay-listening',
  /** open_workspace's path resolved and checked against the project roots, before it is opened and checked again. */
  'workspace.resolved',
] as const;

export type PausePoint = (typeof PAUSE_POINTS)[number];

let armed: ReadonlySet<string> | undefined;
let resumeFile: string | undefined;

/** Arms the named points (an empty list disarms all); `resume` is the file whose appearance resumes. */
export function setPausePoints(points: readonly string[], resume?: string): void {
  armed = points.length > 0 ? new Set(points) : undefined;
  resumeFile = resume;
}

export function pausePoint(point: PausePoint): void {
  if (armed === undefined) return;
  if (armed.has(point)) hold(point);
}

function hold(point: PausePoint): void {
  // Atomics.wait blocks the thread without spinning: nothing else in this process runs until we return.
  const cell = new Int32Array(new SharedArrayBuffer(4));
  const line = Buffer.from(`wb-test-pause ${point}\n`);
  for (let off = 0; off < line.length;) {
    try {
      off += writeSync(2, line, off);
    } catch (e) {
      // stderr may be a non-blocking pipe the reader has not drained yet.
      if ((e as NodeJS.ErrnoException).code !== 'EAGAIN') throw e;
      Atomics.wait(cell, 0, 0, 5);
    }
  }
  const resume = resumeFile;
  while (resume === undefined || !existsSync(resume)) Atomics.wait(cell, 0, 0, 20);
  rmSync(resume, { force: true });
}
