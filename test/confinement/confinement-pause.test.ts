// The swap race of test/confinement/confinement-files.test.ts aimed exactly
// (docs/design-notes.md#pause-points): the server stops at a pause point, the test swaps the directory
// `race/` for a symlink to an outside directory, and the server resumes. With `path.resolved` the swap lands
// between the path check and the open, for every file tool: each must refuse (never return an outside byte).
// With `patch.before-rename` it lands after apply_patch wrote its temp files and before its renames: the
// commit must touch nothing outside and roll back inside. No timing: every step waits for the server's
// `wb-test-pause` line.
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { callWithin, png, type ToolAnswer } from '../helpers/confinement.js';
import { pauseLineReader } from '../helpers/pause-lines.js';
import { snapshotTree, treeChanges } from '../helpers/tree-snapshot.js';
import { startServer, type SpawnedServer } from '../helpers/server.js';
import { makeWorkspace, type TempWorkspace } from '../helpers/workspace.js';

const CANARY = `OUTSIDE-CANARY-${process.pid}-${Date.now()}`;

let ws: TempWorkspace;
let outside: string;
let resumeDir: string;

beforeAll(() => {
  ws = makeWorkspace({ 'README.md': '# pause\n' });
  outside = mkdtempSync(path.join(tmpdir(), 'wb-outside-'));
  resumeDir = mkdtempSync(path.join(tmpdir(), 'wb-resume-'));
  writeFileSync(path.join(outside, 'secret.txt'), `${CANARY}\n`);
  writeFileSync(path.join(outside, 'victim.txt'), `${CANARY} victim\n`);
  writeFileSync(path.join(outside, 'only-outside.txt'), `${CANARY}\n`);
  writeFileSync(path.join(outside, 'p.png'), png(3, 3, 0x01));
});
afterAll(() => {
  ws?.cleanup();
  rmSync(outside, { recursive: true, force: true });
  rmSync(resumeDir, { recursive: true, force: true });
});

/** race/ as a real directory with inside content (recreated before each case). */
function freshRace(): void {
  for (const p of ['race', 'race.real']) rmSync(path.join(ws.dir, p), { recursive: true, force: true });
  mkdirSync(path.join(ws.dir, 'race'));
  writeFileSync(path.join(ws.dir, 'race/secret.txt'), 'inside\n');
  writeFileSync(path.join(ws.dir, 'race/victim.txt'), 'inside victim\n');
  writeFileSync(path.join(ws.dir, 'race/p.png'), png(2, 2));
}

/** The swap: the real directory moves aside (still inside), a symlink to the outside takes its name. */
function swap(): void {
  renameSync(path.join(ws.dir, 'race'), path.join(ws.dir, 'race.real'));
  symlinkSync(outside, path.join(ws.dir, 'race'));
}

/**
 * Starts a server paused at `point`, sends one tool call, swaps at the first pause and resumes every pause
 * (each pause waits for its own resume file), and returns the answer.
 */
async function callSwappedAt(
  point: string,
  tool: string,
  args: Record<string, unknown>,
): Promise<ToolAnswer> {
  const resume = path.join(resumeDir, `resume-${point}-${tool}`);
  const server: SpawnedServer = await startServer({
    workspace: ws.dir,
    env: { SERVICE_SANDBOX: 'off', WB_TEST_PAUSE: point, WB_TEST_PAUSE_RESUME: resume },
  });
  let pauses = 0;
  let swapped = false;
  const onPause = pauseLineReader((reached) => {
    if (reached !== point) return;
    pauses++;
    if (!swapped) {
      swap();
      swapped = true;
    }
    writeFileSync(resume, '');
  });
  server.proc.stderr?.on('data', onPause);
  try {
    const answer = await callWithin(server.url, tool, args);
    expect(swapped, `the server never reached ${point}`).toBe(true);
    expect(pauses).toBeGreaterThan(0);
    return answer;
  } finally {
    server.proc.stderr?.off('data', onPause);
    await server.stop();
  }
}

function expectNoOutsideByte(a: ToolAnswer): void {
  expect(a.raw).not.toContain(CANARY);
  expect(a.raw).not.toContain('only-outside');
  const outsidePng = readFileSync(path.join(outside, 'p.png')).toString('base64');
  expect(a.raw).not.toContain(outsidePng);
  expect(a.code).not.toBe('INTERNAL_ERROR');
}

describe('swap between the path check and the open (pause point path.resolved)', () => {
  let before: ReturnType<typeof snapshotTree>;
  beforeEach(() => {
    freshRace();
    before = snapshotTree(outside);
  });
  afterEach(() => expect(treeChanges(before, snapshotTree(outside))).toEqual([]));

  const CASES: Array<[string, Record<string, unknown>]> = [
    ['read_file', { path: 'race/secret.txt' }],
    ['view_image', { path: 'race/p.png' }],
    ['list_dir', { path: 'race' }],
    ['list_files', { path: 'race' }],
    ['search_text', { query: 'CANARY', path: 'race' }],
    ['search_text', { query: 'CANARY', path: 'race/secret.txt' }],
  ];
  it.each(CASES)('%s %j is refused, never read through the swapped-in symlink', async (tool, args) => {
    const a = await callSwappedAt('path.resolved', tool, args);
    expectNoOutsideByte(a);
    expect(a.isError, a.raw).toBe(true);
    expect(['SYMLINK_ESCAPE', 'NOT_FOUND', 'NOT_A_DIRECTORY']).toContain(a.code);
  });

  it('apply_patch Update File race/victim.txt is refused and the outside victim is untouched', async () => {
    const patch =
      '*** Begin Patch\n*** Update File: race/victim.txt\n@@\n-inside victim\n+patched\n*** End Patch';
    const a = await callSwappedAt('path.resolved', 'apply_patch', { patch });
    expectNoOutsideByte(a);
    expect(a.isError, a.raw).toBe(true);
  });
});

describe('swap after the temp files are written, before the renames (pause point patch.before-rename)', () => {
  let before: ReturnType<typeof snapshotTree>;
  beforeEach(() => {
    freshRace();
    before = snapshotTree(outside);
  });
  afterEach(() => expect(treeChanges(before, snapshotTree(outside))).toEqual([]));

  it('Update, Add and Delete touch nothing outside; refused, they leave the real directory as it was', async () => {
    const patch = [
      '*** Begin Patch',
      '*** Update File: race/victim.txt',
      '@@',
      '-inside victim',
      '+patched',
      '*** Add File: race/new.txt',
      '+new',
      '*** Delete File: race/secret.txt',
      '*** End Patch',
    ].join('\n');
    const a = await callSwappedAt('patch.before-rename', 'apply_patch', { patch });
    expectNoOutsideByte(a);
    // The writes go through descriptors of the real directory, which the swap moved to race.real; the
    // committer also sees that the path no longer leads there and rolls back: every file as it was.
    expect(a.code, a.raw).toBe('SYMLINK_ESCAPE');
    const real = path.join(ws.dir, 'race.real');
    expect(readdirSync(real).sort()).toEqual(['p.png', 'secret.txt', 'victim.txt']);
    expect(readFileSync(path.join(real, 'victim.txt'), 'utf8')).toBe('inside victim\n');
    expect(readFileSync(path.join(real, 'secret.txt'), 'utf8')).toBe('inside\n');
  });
});
