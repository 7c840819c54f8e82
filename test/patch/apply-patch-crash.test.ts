// apply_patch (docs/tools.md#editing-files: fsynced temp file renamed into place; rollback): crash safety at exact points.
// The built server (dist/cli/main.js --stdio) applies a multi-file patch with a test pause point armed
// (WB_TEST_PAUSE, docs/design-notes.md#pause-points); when it reports the pause on stderr the test SIGKILLs it, then finds every
// file wholly old or wholly new — never torn, never missing — with only our hidden temp/backup files beside.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { pauseLineReader } from '../helpers/pause-lines.js';
import { BIN, BIN_NODE_FLAGS } from '../helpers/server.js';
import { makeWorkspace } from '../helpers/workspace.js';

const FILES = 12;
const LINES = 1500;
const CHANGED = [3, 200, 420, 777, 1001, 1300, 1499];
/** Each scenario runs this often: a pause point stops at the same step every time. */
const REPEAT = 3;
/** Only ends a hung test; a passing run never waits for it. */
const HUNG_MS = 60_000;
const LEFTOVER = /^\..*\.wbpatch\.(tmp|bak)$/;

const oldLine = (k: number, i: number) => `file ${k} line ${i} ${'.'.repeat(30)}`;
const oldText = (k: number) => Array.from({ length: LINES }, (_, i) => oldLine(k, i)).join('\n') + '\n';
const newText = (k: number) =>
  Array.from({ length: LINES }, (_, i) =>
    CHANGED.includes(i) ? `file ${k} CHANGED ${i}` : oldLine(k, i),
  ).join('\n') + '\n';
const ADDED = 'added by the patch\n'.repeat(2000);
const DOOMED = 'deleted by the patch\n'.repeat(2000);

/** Updates f0…f11 in this order (one commit step each), then deletes doomed.txt and adds born.txt. */
function patchText(): string {
  const out = ['*** Begin Patch'];
  for (let k = 0; k < FILES; k++) {
    out.push(`*** Update File: f${k}.txt`);
    for (const i of CHANGED) out.push('@@', `-${oldLine(k, i)}`, `+file ${k} CHANGED ${i}`);
  }
  out.push('*** Delete File: doomed.txt', '*** Add File: born.txt');
  for (const l of ADDED.trimEnd().split('\n')) out.push('+' + l);
  out.push('*** End Patch');
  return out.join('\n');
}

const ws = makeWorkspace();
const scratch = ws.dir + '-scratch';
mkdirSync(scratch);
afterAll(() => {
  ws.cleanup();
  rmSync(scratch, { recursive: true, force: true });
});

function reset(): void {
  for (const name of readdirSync(ws.dir)) rmSync(path.join(ws.dir, name), { recursive: true, force: true });
  for (let k = 0; k < FILES; k++) writeFileSync(path.join(ws.dir, `f${k}.txt`), oldText(k));
  writeFileSync(path.join(ws.dir, 'doomed.txt'), DOOMED);
}

const rpc = (id: number | undefined, method: string, params: unknown) =>
  JSON.stringify({ jsonrpc: '2.0', ...(id === undefined ? {} : { id }), method, params }) + '\n';

/**
 * Starts the server over stdio with `points` armed, sends apply_patch, and calls `onPause` for each pause it
 * reports; when `onPause` returns 'kill' the server is SIGKILLed there. Fails if the patch finishes (or the
 * server exits) without stopping at a pause point.
 */
async function applyUntilKilled(
  points: string[],
  onPause: (point: string) => 'kill' | 'resume',
  resumeFile?: string,
): Promise<string[]> {
  const child = spawn(process.execPath, [...BIN_NODE_FLAGS, BIN, '--stdio', '--workspace', ws.dir], {
    env: {
      PATH: process.env.PATH ?? '',
      HOME: '/nonexistent-home',
      SERVICE_RUNTIME_ROOT: scratch,
      WB_TEST_PAUSE: points.join(','),
      ...(resumeFile ? { WB_TEST_PAUSE_RESUME: resumeFile } : {}),
    },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const seen: string[] = [];
  let stderr = '';
  let stdout = '';
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const killed = new Promise<void>((resolve, reject) => {
    const hung = setTimeout(() => reject(new Error(`no pause within ${HUNG_MS} ms: ${stderr}`)), HUNG_MS);
    let stopped = false;
    const pauses = pauseLineReader((point) => {
      if (stopped) return;
      seen.push(point);
      if (onPause(point) === 'kill') {
        stopped = true;
        clearTimeout(hung);
        child.kill('SIGKILL');
        resolve();
      }
    });
    child.stderr.on('data', (c: Buffer) => {
      stderr += c.toString();
      pauses(c);
    });
    child.stdout.on('data', (c: Buffer) => {
      stdout += c.toString();
      if (/"id":2\b/.test(stdout)) reject(new Error(`the patch finished without being killed: ${stdout}`));
    });
    void exited.then(() => reject(new Error(`the server exited by itself: ${stderr}`)));
  });
  child.stdin.write(
    rpc(1, 'initialize', {
      protocolVersion: '2025-11-25',
      capabilities: {},
      clientInfo: { name: 'crash-test', version: '1' },
    }) +
      rpc(undefined, 'notifications/initialized', {}) +
      rpc(2, 'tools/call', { name: 'apply_patch', arguments: { patch: patchText() } }),
  );
  try {
    await killed;
  } finally {
    child.kill('SIGKILL');
    await exited;
  }
  return seen;
}

type Expect = 'old' | 'new' | 'dir';

/** Every file is exactly as `want` says (old or new, never torn); nothing but our hidden leftovers beside. */
function expectTree(want: (k: number) => Expect, patchDone: boolean): string[] {
  for (let k = 0; k < FILES; k++) {
    const file = path.join(ws.dir, `f${k}.txt`);
    const w = want(k);
    if (w === 'dir') expect(statSync(file).isDirectory(), `f${k}.txt`).toBe(true);
    else
      expect(readFileSync(file, 'utf8') === (w === 'old' ? oldText(k) : newText(k)), `f${k}.txt ${w}`).toBe(
        true,
      );
  }
  expect(existsSync(path.join(ws.dir, 'born.txt'))).toBe(patchDone);
  expect(existsSync(path.join(ws.dir, 'doomed.txt'))).toBe(!patchDone);
  if (!patchDone) expect(readFileSync(path.join(ws.dir, 'doomed.txt'), 'utf8') === DOOMED).toBe(true);
  const names = readdirSync(ws.dir);
  const leftovers = names.filter((n) => LEFTOVER.test(n));
  expect(names.filter((n) => !LEFTOVER.test(n) && !/^f\d+\.txt$/.test(n) && n !== 'doomed.txt')).toEqual([]);
  return leftovers;
}

describe('crash safety at exact points (fsynced temp file renamed into place)', () => {
  it('SIGKILL after every temp file is written, before the first rename: every file wholly old', async () => {
    for (let run = 0; run < REPEAT; run++) {
      reset();
      const seen = await applyUntilKilled(['patch.before-rename'], () => 'kill');
      expect(seen).toEqual(['patch.before-rename']);
      const leftovers = expectTree(() => 'old', false);
      // The kill landed after staging: one temp file per written file (12 updates + born.txt).
      expect(leftovers.filter((n) => n.endsWith('.tmp'))).toHaveLength(FILES + 1);
    }
  });

  it('SIGKILL between the first and the second rename: the first file wholly new, the rest wholly old', async () => {
    for (let run = 0; run < REPEAT; run++) {
      reset();
      const seen = await applyUntilKilled(['patch.between-renames'], () => 'kill');
      expect(seen).toEqual(['patch.between-renames']);
      expectTree((k) => (k === 0 ? 'new' : 'old'), false);
    }
  });

  it('SIGKILL during the rollback of a patch that failed part-way (a file replaced by a directory): old or new, never torn', async () => {
    const FAIL_AT = 6; // f6.txt becomes a directory while the patch waits before its first rename
    const resume = path.join(scratch, 'resume');
    for (let run = 0; run < REPEAT; run++) {
      reset();
      const seen = await applyUntilKilled(
        ['patch.before-rename', 'patch.during-rollback'],
        (point) => {
          if (point === 'patch.during-rollback') return 'kill';
          // Another writer swaps f6.txt for a directory: step 6's recheck fails and the commit rolls back.
          const victim = path.join(ws.dir, `f${FAIL_AT}.txt`);
          rmSync(victim);
          mkdirSync(victim);
          writeFileSync(resume, '');
          return 'resume';
        },
        resume,
      );
      expect(seen).toEqual(['patch.before-rename', 'patch.during-rollback']);
      // Steps 0…5 were renamed in; the first undo restored f5.txt; the kill came before f0…f4 were restored.
      expectTree((k) => (k < FAIL_AT - 1 ? 'new' : k === FAIL_AT ? 'dir' : 'old'), false);
      expect(existsSync(resume)).toBe(false); // the paused server consumed it
    }
  });
});

describe('pause points are test-only and checked (docs/design-notes.md#pause-points)', () => {
  it('an unknown WB_TEST_PAUSE point stops the server at start with exit 2 and one line naming the known ones', () => {
    const r = spawnSync(process.execPath, [BIN, '--stdio', '--workspace', ws.dir], {
      env: { PATH: process.env.PATH ?? '', HOME: '/nonexistent-home', WB_TEST_PAUSE: 'patch.no-such-point' },
      encoding: 'utf8',
      input: '',
      timeout: HUNG_MS,
    });
    expect(r.status).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(
      /WB_TEST_PAUSE: unknown pause point patch\.no-such-point \(known: patch\.before-rename, /,
    );
  });

  it('they appear in neither --help nor the configuration table', () => {
    for (const flag of ['--help', '--print-config-table']) {
      const r = spawnSync(process.execPath, [BIN, flag], { encoding: 'utf8', timeout: HUNG_MS });
      expect(r.status).toBe(0);
      expect(r.stdout).not.toMatch(/WB_TEST_PAUSE/);
    }
  });
});
