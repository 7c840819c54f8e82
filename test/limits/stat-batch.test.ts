// The batch lstat of listings (src/process/stat-batch.ts, native/wb-stat.c): what it reports is what lstat
// reports, in order; requests are written as they are made, so the helper answers them while the caller goes on;
// nothing outside the workspace is ever stat'ed — not through a symlinked directory, not
// through "..", not an absolute path — and the last component is never followed; when the helper goes away, a
// request fails and list_files answers the same pages by stat'ing each file itself. Real files, the built
// program (skipped with the reason where it was not built; a failure under CI=true).
import {
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  truncateSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtProgram } from '../../src/process/native.js';
import { NEWEST_BATCH, newestPage, pathPage, type PageRequest } from '../../src/tools/files/file-pages.js';
import { StatBatch } from '../../src/process/stat-batch.js';
import { resolvePath } from '../../src/workspace/paths.js';
import { descendantsOf } from '../helpers/hostile-bin.js';
import { needBuilt } from '../helpers/native.js';
import { memoryDir } from '../helpers/workspace.js';

const program = builtProgram('wb-stat');

/** The wb-stat helpers this process started. */
const helpers = () =>
  new Set(
    descendantsOf(process.pid)
      .filter((p) => p.cmdline.split(' ')[0]?.endsWith('/wb-stat'))
      .map((p) => p.pid),
  );

/** Bytes `pid` has read with read(2) so far (/proc/PID/io). */
const bytesRead = (pid: number) =>
  Number(/^rchar: (\d+)$/m.exec(readFileSync(`/proc/${pid}/io`, 'utf8'))?.[1]);

let top: string;
let ws: string;
let outside: string;
const batches: StatBatch[] = [];
const batch = () => {
  const b = new StatBatch(ws, program);
  batches.push(b);
  return b;
};

beforeAll(() => {
  // On a tmpfs where there is one: the batch test makes and removes 8,000 files (4 s of its 6 on this disk).
  top = mkdtempSync(path.join(memoryDir(), 'wb-statbatch-'));
  ws = path.join(top, 'ws');
  outside = path.join(top, 'outside');
  mkdirSync(path.join(ws, 'src/deep'), { recursive: true });
  mkdirSync(outside);
  writeFileSync(path.join(outside, 'secret.txt'), 'x'.repeat(4242));
  writeFileSync(path.join(ws, 'a.txt'), 'hello');
  writeFileSync(path.join(ws, 'src/b.ts'), 'export const b = 1;\n');
  writeFileSync(path.join(ws, 'src/deep/c.md'), '# c\n'.repeat(100));
  writeFileSync(path.join(ws, 'empty'), '');
  symlinkSync(outside, path.join(ws, 'out-dir')); // a directory outside, by symlink
  symlinkSync(path.join(outside, 'secret.txt'), path.join(ws, 'out-file'));
  symlinkSync('src', path.join(ws, 'in-dir')); // inside, but still a symlink
  for (let i = 0; i < 30; i++)
    writeFileSync(path.join(ws, 'src', `f${String(i).padStart(2, '0')}.txt`), 'y'.repeat(i));
});

afterAll(() => {
  for (const b of batches) b.close();
  rmSync(top, { recursive: true, force: true });
});

describe('StatBatch (native/wb-stat)', () => {
  it('reports what lstat reports, in order, and nothing for what cannot be stat-ed', async () => {
    if (!needBuilt(['wb-stat'], 'StatBatch')) return;
    const paths = [
      'a.txt',
      'src/b.ts',
      'src/deep/c.md',
      'empty',
      'src',
      'out-file',
      'missing.txt',
      'src/deep',
    ];
    const got = await batch().stat(paths);
    expect(got).toHaveLength(paths.length);
    paths.forEach((p, i) => {
      if (p === 'missing.txt') return expect(got[i]).toBeUndefined();
      const st = lstatSync(path.join(ws, p));
      const kind = st.isFile()
        ? 'file'
        : st.isDirectory()
          ? 'directory'
          : st.isSymbolicLink()
            ? 'symlink'
            : 'other';
      expect(got[i], p).toEqual({ kind, size: st.size, mtimeMs: st.mtimeMs });
    });
  });

  it('reports a size past 4 GiB exactly (a sparse file)', async () => {
    if (!needBuilt(['wb-stat'], 'StatBatch sizes')) return;
    const big = 5 * 2 ** 30 + 12_345;
    writeFileSync(path.join(ws, 'sparse.bin'), '');
    truncateSync(path.join(ws, 'sparse.bin'), big);
    const [st] = await batch().stat(['sparse.bin']);
    rmSync(path.join(ws, 'sparse.bin'));
    expect(st).toMatchObject({ kind: 'file', size: big });
  });

  it('never leaves the workspace: not through a symlinked directory, "..", or an absolute path', async () => {
    if (!needBuilt(['wb-stat'], 'StatBatch confinement')) return;
    const secret = path.join(outside, 'secret.txt');
    const got = await batch().stat([
      'out-dir/secret.txt',
      'in-dir/b.ts', // inside, but through a symlink: refused all the same
      '../outside/secret.txt',
      'src/../../outside/secret.txt',
      secret,
      'out-file', // the link itself, never its target
    ]);
    expect(got.slice(0, 5)).toEqual([undefined, undefined, undefined, undefined, undefined]);
    expect(got[5]?.kind).toBe('symlink');
    expect(got[5]?.size).toBe(secret.length);
  });

  it('answers many requests in the order they were made, and a batch as large as a page', async () => {
    if (!needBuilt(['wb-stat'], 'StatBatch requests')) return;
    const b = batch();
    const names = Array.from({ length: 30 }, (_, i) => `src/f${String(i).padStart(2, '0')}.txt`);
    const all = await Promise.all([b.stat(names), b.stat(names.slice(5)), b.stat([]), b.stat(names)]);
    expect(all[0].map((s) => s?.size)).toEqual(names.map((_, i) => i));
    expect(all[1].map((s) => s?.size)).toEqual(names.slice(5).map((_, i) => i + 5));
    expect(all[2]).toEqual([]);
    const big = Array.from({ length: 2500 }, (_, i) => names[i % names.length] as string);
    expect((await b.stat(big)).every((s, i) => s?.size === i % names.length)).toBe(true);
  });

  it('writes each request the moment it is made, so the helper reads them all before one answer is read', async () => {
    if (!needBuilt(['wb-stat'], 'StatBatch pipelining')) return;
    const before = helpers();
    const b = batch();
    await b.stat(['a.txt']);
    const mine = [...helpers()].filter((pid) => !before.has(pid));
    expect(mine).toHaveLength(1);
    const pid = mine[0] as number;
    const base = bytesRead(pid);
    const names = Array.from({ length: 30 }, (_, i) => `src/f${String(i).padStart(2, '0')}.txt`);
    const asks = [names, names.slice(10), ['src/deep/c.md', 'a.txt']];
    // Sent back to back; this test's thread then blocks, so no answer is read and no callback runs meanwhile.
    const answers = asks.map((a) => b.stat(a));
    const sent = asks.reduce((n, a) => n + 12 + a.reduce((m, p) => m + p.length + 1, 0), 0);
    const sleeper = new Int32Array(new SharedArrayBuffer(4));
    for (let i = 0; i < 2000 && bytesRead(pid) < base + sent; i++) Atomics.wait(sleeper, 0, 0, 5);
    expect(bytesRead(pid) - base).toBe(sent);
    const got = await Promise.all(answers);
    expect(got[0]?.map((s) => s?.size)).toEqual(names.map((_, i) => i));
    expect(got[1]?.map((s) => s?.size)).toEqual(names.slice(10).map((_, i) => i + 10));
    expect(got[2]?.map((s) => s?.size)).toEqual([400, 5]);
  });

  it('when the helper is gone a request fails, and is not retried', async () => {
    if (!needBuilt(['wb-stat'], 'StatBatch failure')) return;
    const b = batch();
    await b.stat(['a.txt']);
    b.close();
    await expect(b.stat(['a.txt'])).rejects.toThrow();
    expect(b.unavailable).toBeDefined();
    // A program that cannot start: the request fails, and so does every later one.
    const none = new StatBatch(ws, path.join(top, 'no-such-wb-stat'));
    await expect(none.stat(['a.txt'])).rejects.toThrow();
    await expect(none.stat(['a.txt'])).rejects.toThrow();
    expect(none.unavailable).toMatch(/wb-stat/);
  });
});

describe('list_files pages with and without the batch', () => {
  const request = (stats: StatBatch | undefined, over: Partial<PageRequest> = {}): PageRequest => ({
    root: { lexical: ws, real: ws },
    dir: { ...resolvePath({ lexical: ws, real: ws }, '.'), stat: lstatSync(ws) },
    walk: {},
    include: undefined,
    times: false,
    maxResults: 7,
    after: undefined,
    stats,
    ...over,
  });

  it('are the same, page after page, in path order and newest first', async () => {
    if (!needBuilt(['wb-stat'], 'list_files pages')) return;
    const b = batch();
    for (const times of [false, true]) {
      let after: string | undefined;
      let pages = 0;
      do {
        const [x, y] = [
          await pathPage(request(b, { after, times })),
          await pathPage(request(undefined, { after, times })),
        ];
        expect(x).toEqual(y);
        after = x.more ? x.cursor : undefined;
        pages++;
      } while (after !== undefined && pages < 20);
      expect(pages).toBeGreaterThan(3);
    }
    const [n1, n2] = [
      await newestPage(request(b, { times: true }), undefined),
      await newestPage(request(undefined, { times: true }), undefined),
    ];
    expect(n1).toEqual(n2);
    expect(n1.files[0]?.modified).toBeDefined();
  });

  it("are the same newest first over more files than one batch (batches stat'ed while the walk goes on)", async () => {
    if (!needBuilt(['wb-stat'], 'list_files newest first, many batches')) return;
    const many = path.join(ws, 'many');
    mkdirSync(many);
    const count = NEWEST_BATCH * 2 + 77;
    const base = Date.parse('2026-01-01T00:00:00Z') / 1000;
    for (let i = 0; i < count; i++) {
      const f = path.join(many, `n${i}.txt`);
      writeFileSync(f, 'z'.repeat(i % 50));
      // Times in an order of their own, several files sharing one (then path order decides).
      const t = base + ((i * 7919) % 3001);
      utimesSync(f, t, t);
    }
    try {
      const b = batch();
      let cursor: { path: string; modified?: string } | undefined;
      for (let page = 0; page < 3; page++) {
        const over = { times: true, maxResults: 500 };
        const [x, y] = [
          await newestPage(request(b, over), cursor),
          await newestPage(request(undefined, over), cursor),
        ];
        expect(x).toEqual(y);
        expect(x.files).toHaveLength(500);
        const last = x.files[x.files.length - 1] as { path: string; modified?: string };
        cursor = { path: last.path, modified: last.modified };
      }
      expect(b.unavailable).toBeUndefined();
    } finally {
      rmSync(many, { recursive: true, force: true });
    }
  });

  it('are the same when the helper is killed between two pages', async () => {
    if (!needBuilt(['wb-stat'], 'list_files after a killed helper')) return;
    const before = helpers();
    const b = batch();
    const first = await pathPage(request(b));
    const mine = [...helpers()].filter((pid) => !before.has(pid));
    expect(mine).toHaveLength(1);
    process.kill(mine[0] as number, 'SIGKILL');
    const after = first.cursor;
    expect(await pathPage(request(b, { after }))).toEqual(await pathPage(request(undefined, { after })));
    expect(b.unavailable).toBeDefined();
  });

  it('are the same when the helper fails: the page is built by stat-ing each file', async () => {
    if (!needBuilt(['wb-stat'], 'list_files fallback')) return;
    const b = batch();
    b.close();
    expect(await pathPage(request(b))).toEqual(await pathPage(request(undefined)));
    expect(await newestPage(request(b, { times: true }), undefined)).toEqual(
      await newestPage(request(undefined, { times: true }), undefined),
    );
  });
});
