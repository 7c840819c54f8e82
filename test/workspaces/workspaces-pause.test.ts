// open_workspace's swap race aimed exactly (pause point `workspace.resolved`, src/workspaces/roots.ts): the
// server stops after the path was resolved and checked against the project roots, the test swaps a directory
// of the path for a symlink to a directory outside every root, and the server resumes. The open must be
// refused with WORKSPACE_OUTSIDE_ROOTS, whichever component was swapped; unswapped, the same call opens the
// workspace. No timing: every step waits for the server's `wb-test-pause` line.
import {
  mkdirSync,
  mkdtempSync,
  realpathSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callWithin, type ToolAnswer } from '../helpers/confinement.js';
import { pauseLineReader } from '../helpers/pause-lines.js';
import { startServer } from '../helpers/server.js';

let base: string;
let projects: string;
let outside: string;

beforeAll(() => {
  base = realpathSync(mkdtempSync(path.join(tmpdir(), 'wb-ws-pause-')));
  projects = path.join(base, 'projects');
  outside = path.join(base, 'outside');
  for (const d of ['projects/main', 'projects/victim', 'projects/a/b', 'outside/b'])
    mkdirSync(path.join(base, d), { recursive: true });
});

afterAll(() => rmSync(base, { recursive: true, force: true }));

/** One open_workspace on a server paused at `workspace.resolved`; `swap` runs at the pause (if given). */
async function openSwapped(p: string, swap?: () => void): Promise<ToolAnswer> {
  const resume = path.join(base, `resume-${p.replace(/\W/g, '_')}-${swap ? 'swap' : 'plain'}`);
  const server = await startServer({
    workspace: path.join(projects, 'main'),
    env: {
      SERVICE_SANDBOX: 'off',
      SERVICE_PROJECTS: projects,
      WB_TEST_PAUSE: 'workspace.resolved',
      WB_TEST_PAUSE_RESUME: resume,
    },
  });
  let paused = false;
  const onPause = pauseLineReader((point) => {
    if (point !== 'workspace.resolved' || paused) return;
    paused = true;
    swap?.();
    writeFileSync(resume, '');
  });
  server.proc.stderr?.on('data', onPause);
  try {
    const answer = await callWithin(server.url, 'open_workspace', { path: p });
    expect(paused, `the server never reached workspace.resolved: ${server.stderr()}`).toBe(true);
    if (answer.code === 'INTERNAL_ERROR') throw new Error(server.stderr());
    return answer;
  } finally {
    server.proc.stderr?.off('data', onPause);
    await server.stop();
  }
}

/** `rel` (inside the projects) moves aside and a symlink to `target` takes its name. */
const swapFor = (rel: string, target: string) => () => {
  renameSync(path.join(projects, rel), path.join(projects, `${rel}.real`));
  symlinkSync(target, path.join(projects, rel));
};

describe('a path swapped during open_workspace (pause point workspace.resolved)', () => {
  it('unswapped, the same call opens the workspace', async () => {
    const a = await openSwapped('victim');
    expect(a.isError, a.raw).toBe(false);
    expect(a.sc.path).toBe(path.join(projects, 'victim'));
  });

  it('the directory itself swapped for a symlink out of the roots is refused', async () => {
    const a = await openSwapped('victim', swapFor('victim', outside));
    expect(a.code, a.raw).toBe('WORKSPACE_OUTSIDE_ROOTS');
  });

  it('a parent swapped for a symlink out of the roots is refused', async () => {
    const a = await openSwapped('a/b', swapFor('a', outside));
    expect(a.code, a.raw).toBe('WORKSPACE_OUTSIDE_ROOTS');
    expect(a.raw).not.toContain(outside);
  });
});
