// docs/tools.md#limits: list_files pages continue `after` the last path in path order. What a change between two
// pages may do (docs/operations.md#big-repositories): a file added or removed ahead of the cursor is listed or
// not as the tree is when the walk reaches it; one added behind the cursor is not listed; nothing is listed
// twice; the cursor's own file or directory may be gone. And a page's byte count, counted field by field, is
// the JSON's.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jsonBytes } from '../../src/core/page.js';
import { comparePaths } from '../../src/workspace/path-order.js';
import { entryBytes } from '../../src/tools/files/file-pages.js';
import { callTool } from '../helpers/rpc.js';
import { startInProcess, type InProcessServer } from '../helpers/server.js';
import { makeWorkspace, type TempWorkspace } from '../helpers/workspace.js';

/** d0..d5, each with f00..f39: 240 files, six pages of 40. */
const DIRS = 6;
const PER_DIR = 40;
const name = (d: number, f: number) => `d${d}/f${String(f).padStart(2, '0')}.txt`;

let ws: TempWorkspace;
let srv: InProcessServer;

beforeAll(async () => {
  ws = makeWorkspace();
  for (let d = 0; d < DIRS; d++) for (let f = 0; f < PER_DIR; f++) ws.write(name(d, f), `${d}.${f}\n`);
  srv = await startInProcess({ workspace: ws.dir });
});
afterAll(async () => {
  await srv?.close();
  ws?.cleanup();
});

async function page(args: Record<string, unknown>) {
  const r = await callTool(srv.url, 'list_files', args);
  expect(r.isError, JSON.stringify(r.structuredContent)).toBe(false);
  const files = ((r.structuredContent.files ?? []) as Array<{ path: string }>).map((f) => f.path);
  return { files, next: r.structuredContent.next_action?.arguments as Record<string, unknown> | undefined };
}

describe('list_files paging while the tree changes', () => {
  it('lists what is ahead of the cursor as it is then, nothing behind it, and nothing twice', async () => {
    const seen: string[] = [];
    let next: Record<string, unknown> | undefined = { max_results: PER_DIR };
    const added = { behind: 'd0/f00a.txt', ahead: 'd4/f00a.txt', newDir: 'd3a/x.txt' };
    for (let n = 0; next; n++) {
      const p = await page(next);
      seen.push(...p.files);
      next = p.next;
      if (n === 1) {
        // After two pages (d0, d1): one file behind the cursor, one ahead, a new directory ahead; one file
        // ahead removed, and the whole directory d5 removed.
        ws.write(added.behind, 'late\n');
        ws.write(added.ahead, 'late\n');
        ws.write(added.newDir, 'late\n');
        rmSync(path.join(ws.dir, name(3, 7)));
        rmSync(path.join(ws.dir, 'd5'), { recursive: true });
      }
      if (n === 2) {
        // The cursor's own file and its whole directory go away: the walk resumes after the path all the same.
        expect(next?.after).toBe(name(2, PER_DIR - 1));
        rmSync(path.join(ws.dir, 'd2'), { recursive: true });
      }
      expect(n, 'pages').toBeLessThan(20);
    }
    const expected: string[] = [];
    for (let d = 0; d < 5; d++)
      for (let f = 0; f < PER_DIR; f++) if (!(d === 3 && f === 7)) expected.push(name(d, f));
    expected.push(added.ahead, added.newDir);
    expected.sort(comparePaths);
    expect(seen).toEqual(expected);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).not.toContain(added.behind);
    // Restore the tree for the next test.
    rmSync(path.join(ws.dir, added.behind));
    rmSync(path.join(ws.dir, added.ahead));
    rmSync(path.join(ws.dir, 'd3a'), { recursive: true });
    ws.write(name(3, 7), '3.7\n');
    for (const d of [2, 5]) for (let f = 0; f < PER_DIR; f++) ws.write(name(d, f), `${d}.${f}\n`);
  });

  it('resumes after a path that never existed, inside and between directories', async () => {
    const a = await page({ max_results: 3, after: 'd1/f05a.txt' });
    expect(a.files).toEqual([name(1, 6), name(1, 7), name(1, 8)]);
    const b = await page({ max_results: 2, after: 'd1/zzz/deeper' });
    expect(b.files).toEqual([name(2, 0), name(2, 1)]);
    const c = await page({ max_results: 2, after: 'd' });
    expect(c.files).toEqual([name(0, 0), name(0, 1)]);
    const end = await page({ after: 'd9' });
    expect(end.files).toEqual([]);
    expect(end.next).toBeUndefined();
  });
});

describe('page byte counting', () => {
  it('counts an entry as its JSON does, whatever the characters of its path', () => {
    const paths = [
      'a.txt',
      'src/deep/er/file.ts',
      'quote"d/back\\slash.txt',
      'tab\there.txt',
      'ünïcödé/日本語.md',
      'emoji/😀.txt',
      'ctl\u0001char',
      '\u2028line-sep',
    ];
    for (const p of paths)
      for (const extra of [
        {},
        { size_bytes: 7 },
        { type: 'symlink' as const, size_bytes: 1234567890123 },
        { size_bytes: 1, modified: '2026-11-25T20:00:00.000Z' },
      ]) {
        const f = { path: p, ...extra };
        expect(entryBytes(f), JSON.stringify(f)).toBe(jsonBytes(f));
      }
  });

  it('keeps pages of awkward names under the ceiling and continues exactly', async () => {
    const awkward = makeWorkspace();
    const long = 'ü"\\'.repeat(60);
    const names: string[] = [];
    for (let i = 0; i < 600; i++) {
      const rel = `n${String(i).padStart(3, '0')}${long}.txt`;
      mkdirSync(awkward.dir, { recursive: true });
      writeFileSync(path.join(awkward.dir, rel), 'x');
      names.push(rel);
    }
    const other = await startInProcess({ workspace: awkward.dir });
    try {
      const seen: string[] = [];
      let next: Record<string, unknown> | undefined = { max_results: 100_000 };
      let pages = 0;
      for (; next; pages++) {
        const r = await callTool(other.url, 'list_files', next);
        const files = r.structuredContent.files as Array<{ path: string }>;
        expect(Buffer.byteLength(JSON.stringify({ files }))).toBeLessThanOrEqual(64 * 1024 + 16);
        seen.push(...files.map((f) => f.path));
        next = r.structuredContent.next_action?.arguments;
        expect(pages).toBeLessThan(50);
      }
      expect(pages).toBeGreaterThan(1);
      expect(seen).toEqual([...names].sort(comparePaths));
    } finally {
      await other.close();
      awkward.cleanup();
    }
  });
});
