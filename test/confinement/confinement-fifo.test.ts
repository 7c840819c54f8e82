// A FIFO attack (docs/tools.md#the-tools, docs/tools.md#paths): a FIFO in the workspace passed to
// every file tool. Each call answers at once — a specific error where it refuses, never INTERNAL_ERROR — and
// the server keeps serving after many concurrent calls on the FIFO (today its thread pool blocks in open()).
// The 60 s ceilings only end a hung test; a hang is reported as the word HUNG.
import { execFileSync } from 'node:child_process';
import { closeSync, constants, openSync } from 'node:fs';
import path from 'node:path';
import { describe, it, type TestContext } from 'vitest';
import { CEILING_MS, outcome, patch, type ToolCase } from '../helpers/confinement.js';
import { dirEntries } from '../helpers/list-dir.js';
import { startServer, type SpawnedServer } from '../helpers/server.js';
import { git, makeWorkspace, type TempWorkspace } from '../helpers/workspace.js';

const FIFOS = ['p.png', 'p.txt'];
const NEEDLE = 'fifo-needle-7f3a';
const CASE_CEILING_MS = 3 * CEILING_MS + 30_000;

interface Setup {
  ws: TempWorkspace;
  srv: SpawnedServer;
}

/** A git workspace with one committed file holding NEEDLE and two FIFOs, served by the real bin; both are
 * removed when the calling test finishes. */
async function setup({ onTestFinished }: TestContext): Promise<Setup> {
  const ws = makeWorkspace({ 'a.txt': `${NEEDLE}\n` }, { git: true });
  git(ws.dir, 'add', 'a.txt');
  git(ws.dir, 'commit', '-q', '-m', 'init');
  for (const f of FIFOS) execFileSync('mkfifo', [path.join(ws.dir, f)]);
  onTestFinished(() => ws.cleanup());
  const srv = await startServer({ workspace: ws.dir, timeoutMs: CEILING_MS });
  onTestFinished(async () => {
    releaseReaders(ws);
    await srv.stop('SIGKILL');
    releaseReaders(ws);
  });
  return { ws, srv };
}

/** Lets any reader still blocked in open() on a FIFO go (it reads EOF), so no child is left hanging. */
function releaseReaders(ws: TempWorkspace) {
  for (const f of FIFOS) {
    try {
      closeSync(openSync(path.join(ws.dir, f), constants.O_WRONLY | constants.O_NONBLOCK));
    } catch {
      /* ENXIO: nobody is waiting */
    }
  }
}

const paths = (xs: Array<{ path: string }> | undefined) => (xs ?? []).map((x) => x.path);

const CASES: ToolCase[] = [
  { title: 'read_file p.txt', tool: 'read_file', args: { path: 'p.txt' }, expect: 'refuse' },
  { title: 'view_image p.png', tool: 'view_image', args: { path: 'p.png' }, expect: 'refuse' },
  {
    title: 'search_text {path:"p.txt"}',
    tool: 'search_text',
    args: { query: NEEDLE, path: 'p.txt' },
    expect: 'answer',
    check: (sc) => (sc.matches ?? []).length === 0, // no matches: `matches` is left out (docs/design-notes.md#lean-results)
  },
  {
    title: 'search_text {path:"."} (a FIFO in the walk)',
    tool: 'search_text',
    args: { query: NEEDLE, path: '.' },
    expect: 'ok',
    check: (sc) => paths(sc.matches).includes('a.txt'),
  },
  {
    title: 'list_dir .',
    tool: 'list_dir',
    args: { path: '.' },
    expect: 'ok',
    check: (sc) => paths(dirEntries(sc)).includes('p.png') && paths(dirEntries(sc)).includes('a.txt'),
  },
  {
    title: 'list_files .',
    tool: 'list_files',
    args: { path: '.' },
    expect: 'ok',
    check: (sc) => paths(sc.files).includes('a.txt'),
  },
  {
    title: 'apply_patch Update File p.txt',
    tool: 'apply_patch',
    args: { patch: patch('*** Update File: p.txt', '@@', '+x') },
    expect: 'refuse',
  },
  {
    title: 'apply_patch Update File p.txt + Move to moved.txt',
    tool: 'apply_patch',
    args: { patch: patch('*** Update File: p.txt', '*** Move to: moved.txt', '@@', '+x') },
    expect: 'refuse',
  },
  {
    title: 'apply_patch Add File p.txt (exists)',
    tool: 'apply_patch',
    args: { patch: patch('*** Add File: p.txt', '+x') },
    expect: 'refuse',
  },
  { title: 'git_status', tool: 'git_status', args: { path: '.' }, expect: 'ok' },
  { title: 'git_diff', tool: 'git_diff', args: { path: '.' }, expect: 'answer' },
  { title: 'git_blame p.txt', tool: 'git_blame', args: { path: 'p.txt' }, expect: 'refuse' },
];

describe.concurrent('attack: a FIFO passed to every file tool answers at once', () => {
  for (const c of CASES) {
    it(
      `attack: FIFO → ${c.title} answers (${c.expect}), never INTERNAL_ERROR, and the server keeps serving`,
      async (ctx) => {
        const { expect } = ctx;
        const { srv } = await setup(ctx);
        const r = await outcome(srv.url, c.tool, c.args);
        const after = await outcome(srv.url, 'list_dir', { path: '.' });
        console.log(`[fifo] ${c.title}: ${r.word}; list_dir afterwards: ${after.word}`);
        expect.soft(r.word, `${c.title} did not answer`).not.toBe('HUNG');
        expect
          .soft(r.word, `${c.title}: ${JSON.stringify(r.answer?.sc).slice(0, 400)}`)
          .not.toBe('INTERNAL_ERROR');
        if (c.expect === 'refuse') expect.soft(r.word, `${c.title} must be refused`).not.toBe('ok');
        if (c.expect === 'ok')
          expect.soft(r.word, `${c.title}: ${JSON.stringify(r.answer?.sc).slice(0, 400)}`).toBe('ok');
        if (c.check && r.word === 'ok')
          expect
            .soft(c.check(r.answer?.sc), `${c.title} result: ${JSON.stringify(r.answer?.sc).slice(0, 400)}`)
            .toBe(true);
        expect(after.word, 'list_dir after the FIFO call').toBe('ok');
      },
      CASE_CEILING_MS,
    );
  }
});

describe('attack: concurrent calls on a FIFO do not stall the server', () => {
  it(
    'attack: 8 view_image p.png + 8 read_file p.txt at once, then list_dir, list_files, apply_patch, read_file still answer',
    async (ctx) => {
      const { expect } = ctx;
      const { srv } = await setup(ctx);
      const storm = [
        ...Array.from({ length: 8 }, () => outcome(srv.url, 'view_image', { path: 'p.png' })),
        ...Array.from({ length: 8 }, () => outcome(srv.url, 'read_file', { path: 'p.txt' })),
      ];
      const words = (await Promise.all(storm)).map((o) => o.word);
      const follow = await Promise.all([
        outcome(srv.url, 'list_dir', { path: '.' }),
        outcome(srv.url, 'list_files', { path: '.' }),
        outcome(srv.url, 'apply_patch', { patch: patch('*** Add File: new.txt', '+new') }),
        outcome(srv.url, 'read_file', { path: 'a.txt' }),
      ]);
      const tally = (ws: string[]) =>
        ws.reduce<Record<string, number>>((m, w) => ((m[w] = (m[w] ?? 0) + 1), m), {});
      console.log(
        `[fifo] storm: ${JSON.stringify(tally(words))}; afterwards: ${follow.map((f) => f.word).join(', ')}`,
      );
      expect.soft(words.filter((w) => w === 'HUNG').length, 'FIFO calls that never answered').toBe(0);
      expect
        .soft(words.filter((w) => w === 'INTERNAL_ERROR' || w === 'ok').length, 'FIFO calls not refused')
        .toBe(0);
      expect(follow.map((f) => f.word)).toEqual(['ok', 'ok', 'ok', 'ok']);
      expect(follow[3]?.answer?.sc.content).toBe(`${NEEDLE}\n`);
    },
    CASE_CEILING_MS,
  );
});
