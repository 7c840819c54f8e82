// docs/tools.md#editing-files ("Concurrent patches from different clients never lose an update: locking is
// per file") and docs/design-notes.md#same-file-concurrency (lock → read → match → write): many clients over
// real HTTP at once, plus the engine with a held lock to show that different files do not wait for each other
// and one file does.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyPatch, type PatchEnv } from '../../src/patch/engine.js';
import { FileLocks } from '../../src/patch/locks.js';
import { checkRoot } from '../../src/workspace/paths.js';
import { callTool } from '../helpers/rpc.js';
import { startInProcess, type InProcessServer } from '../helpers/server.js';
import { makeWorkspace, type TempWorkspace } from '../helpers/workspace.js';

const N = 16;
const spaced = (n: number) =>
  Array.from({ length: n * 4 }, (_, i) => (i % 4 === 0 ? `item ${i / 4}` : `filler ${i}`)).join('\n') + '\n';

let ws: TempWorkspace;
let srv: InProcessServer;

beforeAll(async () => {
  const files: Record<string, string> = {
    'shared.txt': spaced(N),
    'race.txt': 'value = 0\n',
    'x.txt': 'x\n',
    'y.txt': 'y\n',
  };
  for (let i = 0; i < N; i++) files[`many/f${i}.txt`] = `file ${i}\nline two\n`;
  ws = makeWorkspace(files);
  srv = await startInProcess({ workspace: ws.dir });
});
afterAll(async () => {
  await srv.close();
  ws.cleanup();
});

const patch = (...body: string[]) => ['*** Begin Patch', ...body, '*** End Patch'].join('\n');
const read = (rel: string) => readFileSync(path.join(ws.dir, rel), 'utf8');

describe('concurrent clients (docs/tools.md#editing-files, docs/design-notes.md#same-file-concurrency)', () => {
  it(`${N} patches to ${N} different files at once all apply`, async () => {
    const results = await Promise.all(
      Array.from({ length: N }, (_, i) =>
        callTool(srv.url, 'apply_patch', {
          patch: patch(`*** Update File: many/f${i}.txt`, `-file ${i}`, `+FILE ${i} changed`),
        }),
      ),
    );
    for (const r of results) expect(r.isError, r.content[0]?.text).toBe(false);
    for (let i = 0; i < N; i++) expect(read(`many/f${i}.txt`)).toBe(`FILE ${i} changed\nline two\n`);
  });

  it(`${N} patches to different lines of one file at once: no update is lost`, async () => {
    const results = await Promise.all(
      Array.from({ length: N }, (_, i) =>
        callTool(srv.url, 'apply_patch', {
          patch: patch('*** Update File: shared.txt', `-item ${i}`, `+item ${i} edited by client ${i}`),
        }),
      ),
    );
    for (const r of results) expect(r.isError, r.content[0]?.text).toBe(false);
    const text = read('shared.txt');
    for (let i = 0; i < N; i++) expect(text).toContain(`item ${i} edited by client ${i}\n`);
    expect(text.split('\n').length).toBe(N * 4 + 1);
  });

  it('two patches to the same line: one wins, the other gets a retryable context error', async () => {
    const [a, b] = await Promise.all(
      ['1', '2'].map((v) =>
        callTool(srv.url, 'apply_patch', {
          patch: patch('*** Update File: race.txt', '-value = 0', `+value = ${v}`),
        }),
      ),
    );
    const ok = [a, b].filter((r) => !r!.isError);
    const failed = [a, b].filter((r) => r!.isError);
    expect(ok).toHaveLength(1);
    expect(failed).toHaveLength(1);
    expect(failed[0]!.structuredContent.error).toMatchObject({
      code: 'PATCH_CONTEXT_NOT_FOUND',
      retryable: true,
    });
    expect(['value = 1\n', 'value = 2\n']).toContain(read('race.txt'));
  });

  it('patches that take the same two files in opposite orders never deadlock', async () => {
    const results = await Promise.all(
      Array.from({ length: N }, (_, i) => {
        const [first, second] = i % 2 ? ['x.txt', 'y.txt'] : ['y.txt', 'x.txt'];
        return callTool(srv.url, 'apply_patch', {
          patch: patch(
            `*** Update File: ${first}`,
            '@@',
            `+${first} from ${i}`,
            `*** Update File: ${second}`,
            '@@',
            `+${second} from ${i}`,
          ),
        });
      }),
    );
    for (const r of results) expect(r.isError, r.content[0]?.text).toBe(false);
    expect(read('x.txt').split('\n').filter(Boolean)).toHaveLength(N + 1);
    expect(read('y.txt').split('\n').filter(Boolean)).toHaveLength(N + 1);
  });
});

describe('lock scope (docs/design-notes.md#same-file-concurrency: per file, not global)', () => {
  it('a patch holding one file does not block another file, and does block its own file', async () => {
    const local = makeWorkspace({ 'held.txt': 'held\n', 'free.txt': 'free\n' });
    try {
      const rc = checkRoot(local.dir, '/nonexistent-home');
      if (!rc.ok) throw new Error(rc.reason);
      const env: PatchEnv = { root: rc.root, locks: new FileLocks() };
      let open!: () => void;
      const gate = new Promise<void>((r) => (open = r));
      let entered!: () => void;
      const inside = new Promise<void>((r) => (entered = r));
      const holder = applyPatch(env, patch('*** Update File: held.txt', '-held', '+held 1'), {
        hooks: {
          beforeStep: async () => {
            entered();
            await gate;
          },
        },
      });
      await inside;
      await applyPatch(env, patch('*** Update File: free.txt', '-free', '+free 1'));
      expect(readFileSync(path.join(local.dir, 'free.txt'), 'utf8')).toBe('free 1\n');
      let sameFileDone = false;
      const sameFile = applyPatch(env, patch('*** Update File: held.txt', '@@', '+appended')).then(
        () => (sameFileDone = true),
      );
      await new Promise((r) => setTimeout(r, 50));
      expect(sameFileDone).toBe(false);
      open();
      await holder;
      await sameFile;
      expect(readFileSync(path.join(local.dir, 'held.txt'), 'utf8')).toBe('held 1\nappended\n');
      expect(env.locks.size).toBe(0);
    } finally {
      local.cleanup();
    }
  });
});
