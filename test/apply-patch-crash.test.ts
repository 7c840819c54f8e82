// tool-contract "apply_patch" (temp file, fsync, rename): crash safety. A child Node process applies a large
// multi-file patch forwards and backwards in a loop with the built engine (dist/); the test SIGKILLs it at
// random moments and then finds every file either fully old or fully new — never torn, never missing — with
// at most our own hidden temp/backup files left beside them.
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from './helpers/server.js';
import { makeWorkspace } from './helpers/workspace.js';

const FILES = 24;
const LINES = 1500;
const CHANGED = [3, 200, 420, 777, 1001, 1300, 1499];
const ITERATIONS = 16;
const LEFTOVER = /^\..*\.wbpatch\.(tmp|bak)$/;

const oldText = (k: number) =>
  Array.from({ length: LINES }, (_, i) => `file ${k} line ${i} ${'.'.repeat(30)}`).join('\n') + '\n';
const newText = (k: number) =>
  Array.from({ length: LINES }, (_, i) =>
    CHANGED.includes(i) ? `file ${k} CHANGED ${i}` : `file ${k} line ${i} ${'.'.repeat(30)}`,
  ).join('\n') + '\n';
const ADDED = 'added by the patch\n'.repeat(2000);

function forwardPatch(): string {
  const out = ['*** Begin Patch'];
  for (let k = 0; k < FILES; k++) {
    out.push(`*** Update File: f${k}.txt`);
    for (const i of CHANGED)
      out.push('@@', `-file ${k} line ${i} ${'.'.repeat(30)}`, `+file ${k} CHANGED ${i}`);
  }
  out.push(
    '*** Delete File: doomed.txt',
    '*** Add File: born.txt',
    ...ADDED.trimEnd()
      .split('\n')
      .map((l) => '+' + l),
    '*** End Patch',
  );
  return out.join('\n');
}

function backwardPatch(): string {
  const out = ['*** Begin Patch'];
  for (let k = 0; k < FILES; k++) {
    out.push(`*** Update File: f${k}.txt`);
    for (const i of CHANGED)
      out.push('@@', `-file ${k} CHANGED ${i}`, `+file ${k} line ${i} ${'.'.repeat(30)}`);
  }
  out.push(
    '*** Delete File: born.txt',
    '*** Add File: doomed.txt',
    ...ADDED.trimEnd()
      .split('\n')
      .map((l) => '+' + l),
    '*** End Patch',
  );
  return out.join('\n');
}

const CHILD = `
import { readFileSync } from 'node:fs';
const [dist, dir, fwdFile, bwdFile] = process.argv.slice(1);
const { applyPatch } = await import(dist + '/patch/engine.js');
const { FileLocks } = await import(dist + '/patch/locks.js');
const { checkRoot } = await import(dist + '/workspace/paths.js');
const env = { root: checkRoot(dir, '/nonexistent-home').root, locks: new FileLocks() };
const patches = [readFileSync(fwdFile, 'utf8'), readFileSync(bwdFile, 'utf8')];
process.stdout.write('ready\\n');
for (let n = 0; ; n++) await applyPatch(env, patches[n % 2]);
`;

const ws = makeWorkspace();
afterAll(() => ws.cleanup());

function reset(): void {
  for (const name of readdirSync(ws.dir)) rmSync(path.join(ws.dir, name), { force: true });
  for (let k = 0; k < FILES; k++) writeFileSync(path.join(ws.dir, `f${k}.txt`), oldText(k));
  writeFileSync(path.join(ws.dir, 'doomed.txt'), ADDED);
}

async function runAndKill(delayMs: number, fwd: string, bwd: string): Promise<void> {
  const child = spawn(
    process.execPath,
    ['--input-type=module', '-e', CHILD, path.join(REPO_ROOT, 'dist'), ws.dir, fwd, bwd],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  await new Promise<void>((resolve, reject) => {
    child.stdout.once('data', () => resolve());
    child.once('exit', (code) => reject(new Error(`child exited early (${code}): ${stderr}`)));
  });
  await new Promise((r) => setTimeout(r, delayMs));
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGKILL');
  await exited;
  if (stderr) throw new Error(`child failed: ${stderr}`);
}

describe('crash safety (tool-contract "apply_patch": fsynced temp file renamed into place)', () => {
  it(`SIGKILL mid-commit ${ITERATIONS} times: every file is fully old or fully new`, async () => {
    const fwd = path.join(ws.dir, '..', `${path.basename(ws.dir)}-fwd.patch`);
    const bwd = path.join(ws.dir, '..', `${path.basename(ws.dir)}-bwd.patch`);
    writeFileSync(fwd, forwardPatch());
    writeFileSync(bwd, backwardPatch());
    let interrupted = 0;
    try {
      for (let it = 0; it < ITERATIONS; it++) {
        reset();
        await runAndKill(20 + Math.floor(Math.random() * 250), fwd, bwd);
        const names = readdirSync(ws.dir);
        const leftovers = names.filter((n) => LEFTOVER.test(n));
        expect(
          names.filter(
            (n) => !LEFTOVER.test(n) && !/^f\d+\.txt$/.test(n) && n !== 'doomed.txt' && n !== 'born.txt',
          ),
        ).toEqual([]);
        let olds = 0;
        let news = 0;
        for (let k = 0; k < FILES; k++) {
          const text = readFileSync(path.join(ws.dir, `f${k}.txt`), 'utf8');
          if (text === oldText(k)) olds++;
          else if (text === newText(k)) news++;
          else
            throw new Error(`iteration ${it}: f${k}.txt is neither the old nor the new version (torn write)`);
        }
        for (const name of ['doomed.txt', 'born.txt']) {
          const file = path.join(ws.dir, name);
          if (existsSync(file)) expect(readFileSync(file, 'utf8'), name).toBe(ADDED);
        }
        if (leftovers.length > 0 || (olds > 0 && news > 0)) interrupted++;
      }
    } finally {
      rmSync(fwd, { force: true });
      rmSync(bwd, { force: true });
    }
    // The kills must really have landed inside commits for the test to mean anything.
    expect(interrupted).toBeGreaterThan(0);
    console.log(`crash test: ${interrupted}/${ITERATIONS} kills landed mid-commit`);
  }, 120_000);
});
