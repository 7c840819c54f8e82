// README "Limits": no single listing or search call can stall or exhaust the server. Hostile-size trees served by
// the real bin with the loop probe (test/helpers/probed-server.ts): 8,000 nested directories (the review saw one
// list_files take 3.9 GB and 7,935 descriptors for 34 s) and 200,000 files (686 MB, and a 7 MB result). Each call
// must keep the event loop's longest delay under 250 ms and the server's RSS under 300 MB (the review's
// ceilings), hold few descriptors, and answer at most one page (PAGE_BYTES of JSON) with next_action.
// Paging through 10,000 files must yield every file exactly once.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PAGE_BYTES } from '../../src/core/page.js';
import { dirEntries } from '../helpers/list-dir.js';
import { PROBE_LIMITS, startProbedServer, type ProbedServer } from '../helpers/probed-server.js';
import { callTool } from '../helpers/rpc.js';
import { REPO_ROOT, startInProcess, type InProcessServer } from '../helpers/server.js';
import { makeWorkspace, type TempWorkspace } from '../helpers/workspace.js';

const run = promisify(execFile);
const MAKE_TREE = path.join(REPO_ROOT, 'test/helpers/make-tree.mjs');
/** Only ends a hung fixture: making or removing 200,000 files on a loaded machine takes minutes. */
const FIXTURE_CEILING_MS = 900_000;
const makeTree = (...args: string[]) => run(process.execPath, [MAKE_TREE, ...args]);

/** Descriptors the server may hold during one call (it has ~30 open at rest). */
const MAX_FDS = 200;
/** JSON of one result: a page plus its few other fields. */
const MAX_RESULT_BYTES = PAGE_BYTES + 2048;

/** Calls the tool between two probe samples; returns the result and what the server did meanwhile. */
async function probed(srv: ProbedServer, tool: string, args: Record<string, unknown>) {
  await srv.sample();
  const r = await callTool(srv.url, tool, args);
  const s = await srv.sample();
  return { r, s };
}

function expectBounded(s: Awaited<ReturnType<ProbedServer['sample']>>) {
  expect(s.maxDelayMs, 'longest event-loop delay (ms)').toBeLessThan(PROBE_LIMITS.maxDelayMs);
  expect(s.maxRssBytes, 'peak RSS (bytes)').toBeLessThan(PROBE_LIMITS.maxRssBytes);
  expect(s.maxFds, 'most open descriptors').toBeLessThan(MAX_FDS);
}

function expectOnePage(r: Awaited<ReturnType<typeof callTool>>) {
  expect(r.isError, JSON.stringify(r.structuredContent).slice(0, 500)).toBe(false);
  expect(Buffer.byteLength(JSON.stringify(r.structuredContent))).toBeLessThanOrEqual(MAX_RESULT_BYTES);
  expect(Buffer.byteLength(r.content[0]?.text ?? '')).toBeLessThanOrEqual(MAX_RESULT_BYTES);
}

/** Removals of the trees whose tests are done: they run on beside the next describe's tests (never beside a
 *  probed call's: the probed describes run first) and are awaited when the file ends. */
const removals: Array<Promise<unknown>> = [];
afterAll(() => Promise.all(removals), FIXTURE_CEILING_MS);

/**
 * The paging tree's size: enough that every listing crosses its page and batch bounds several times — list_files
 * pages of ~1,300 entries (PAGE_BYTES of JSON: more than 5 pages asserted), list_dir pages of 1,000 (its default
 * max_entries, also the bounded heap of the time sort), newest-first stat batches of 4,096
 * (src/tools/files/file-pages.ts NEWEST_BATCH), search pages of ~900 matches — and no larger: every page of the
 * sorts that need the whole tree walks all of it again, so the paging's time grows with the square of the size.
 */
const PAGING_FILES = 10_000;
const PAGING_PER_DIR = 500;

/** The paging tree, made beside the 200,000 files (it is a twentieth of their size, so ready before them). */
let pagingWs: TempWorkspace | undefined;
let pagingTree: Promise<unknown> | undefined;
function makePagingTree(): Promise<unknown> {
  if (!pagingTree) {
    pagingWs = makeWorkspace({}, { inMemory: true });
    pagingTree = makeTree('files', pagingWs.dir, String(PAGING_FILES), String(PAGING_PER_DIR));
  }
  return pagingTree;
}

describe('8,000 nested directories', () => {
  let ws: TempWorkspace;
  let srv: ProbedServer;
  beforeAll(async () => {
    ws = makeWorkspace({ 'top.txt': 'needle\n' }, { inMemory: true });
    await makeTree('nested', ws.dir, '8000', 'd');
    srv = await startProbedServer({ workspace: ws.dir });
  }, FIXTURE_CEILING_MS);
  afterAll(async () => {
    await srv?.stop();
    removals.push(makeTree('remove-nested', ws.dir, 'd').then(() => ws.cleanup()));
  }, FIXTURE_CEILING_MS);

  it('list_files stays bounded and says that the depth limit stopped it', async () => {
    const { r, s } = await probed(srv, 'list_files', {});
    expectOnePage(r);
    expectBounded(s);
    expect(r.structuredContent.files).toEqual([{ path: 'top.txt', size_bytes: 7 }]);
    expect(r.structuredContent.note).toMatch(
      /^directories more than 256 levels deep were not entered \(first: d\/d\//,
    );
    expect(r.content[0]?.text).toContain('more than 256 levels deep were not entered');
  });

  it('list_dir (recursive, 20 levels) stays bounded', async () => {
    const { r, s } = await probed(srv, 'list_dir', { recursive: true });
    expectOnePage(r);
    expectBounded(s);
    expect(r.structuredContent.dirs).toHaveLength(20); // d × 20 levels
    expect(Object.keys(r.structuredContent.files)).toEqual(['top.txt']);
  });

  it('search_text stays bounded and searches as deep as the walk does', async () => {
    const { r, s } = await probed(srv, 'search_text', { query: 'needle' });
    expectOnePage(r);
    expectBounded(s);
    expect(r.structuredContent.matches.map((m: { path: string }) => m.path)).toEqual(['top.txt']);
  });
});

describe('200,000 files', () => {
  let ws: TempWorkspace;
  let srv: ProbedServer;
  beforeAll(async () => {
    ws = makeWorkspace({}, { inMemory: true });
    // All awaited before the first probed call: nothing of this file's making runs beside one.
    await Promise.all([makeTree('files', ws.dir, '200000', '1000'), makePagingTree(), ...removals]);
    srv = await startProbedServer({ workspace: ws.dir });
  }, FIXTURE_CEILING_MS);
  afterAll(async () => {
    await srv?.stop();
    removals.push(run('rm', ['-rf', ws.dir]));
  }, FIXTURE_CEILING_MS);

  it(
    'list_files answers one page with next_action, bounded',
    async () => {
      const { r, s } = await probed(srv, 'list_files', { max_results: 100_000 });
      expectOnePage(r);
      expectBounded(s);
      const files = r.structuredContent.files as Array<{ path: string }>;
      expect(files[0]?.path).toBe('d0000/f00000.txt');
      expect(r.structuredContent.next_action).toEqual({
        tool: 'list_files',
        arguments: { max_results: 100_000, after: files[files.length - 1]?.path },
      });
    },
    FIXTURE_CEILING_MS,
  );

  it(
    'list_files newest first walks them all, bounded, and answers one page',
    async () => {
      const { r, s } = await probed(srv, 'list_files', { sort: 'modified' });
      expectOnePage(r);
      expectBounded(s);
      expect(r.structuredContent.next_action.arguments.after).toMatch(
        /^\d{4}-\d\d-\d\dT\S+ d\d{4}\/f\d{5}\.txt$/,
      );
    },
    FIXTURE_CEILING_MS,
  );

  it(
    'list_dir over the whole tree answers one page, bounded',
    async () => {
      const { r, s } = await probed(srv, 'list_dir', { recursive: true, max_entries: 100_000 });
      expectOnePage(r);
      expectBounded(s);
      expect(r.structuredContent.next_action.arguments.after).toMatch(/^d\d{4}\/f\d{5}\.txt$/);
    },
    FIXTURE_CEILING_MS,
  );

  it(
    'search_text with 200,000 matching lines answers one page with next_action, bounded',
    async () => {
      const { r, s } = await probed(srv, 'search_text', { query: 'needle', max_results: 10_000 });
      expectOnePage(r);
      expectBounded(s);
      expect(r.structuredContent).toMatchObject({ truncated: true, total_is_lower_bound: true });
      const m = r.structuredContent.matches as Array<{ path: string; line: number }>;
      expect(m[0]).toMatchObject({ path: 'd0000/f00000.txt', line: 1 });
      const last = m[m.length - 1] as { path: string; line: number };
      expect(r.structuredContent.next_action.arguments.after).toBe(`${last.path}:${last.line}`);
    },
    FIXTURE_CEILING_MS,
  );
});

describe('paging through 10,000 files', () => {
  let ws: TempWorkspace;
  let srv: InProcessServer;
  const expected: string[] = [];
  beforeAll(async () => {
    await makePagingTree();
    ws = pagingWs as TempWorkspace;
    for (let i = 0; i < PAGING_FILES; i++)
      expected.push(
        `d${String(Math.floor(i / PAGING_PER_DIR)).padStart(4, '0')}/f${String(i % PAGING_PER_DIR).padStart(5, '0')}.txt`,
      );
    srv = await startInProcess({ workspace: ws.dir });
  }, FIXTURE_CEILING_MS);
  afterAll(async () => {
    await srv?.close();
    ws.cleanup();
  }, FIXTURE_CEILING_MS);

  /** Follows next_action from `args` to the end; returns what every page listed, in order. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  async function pages(tool: string, args: Record<string, unknown>, pick: (sc: any) => string[]) {
    const seen: string[] = [];
    let count = 0;
    for (let a: Record<string, unknown> | undefined = args; a; count++) {
      const r = await callTool(srv.url, tool, a);
      expectOnePage(r);
      seen.push(...pick(r.structuredContent));
      a = r.structuredContent.next_action?.arguments;
    }
    console.log(`[paging] ${tool} ${JSON.stringify(args)}: ${count} pages`);
    return { seen, count };
  }

  it('list_files yields every file exactly once, in path order', async () => {
    const { seen, count } = await pages('list_files', { max_results: 100_000 }, (sc) =>
      (sc.files ?? []).map((f: { path: string }) => f.path),
    );
    expect(count).toBeGreaterThan(5);
    expect(seen).toEqual(expected);
  });

  it('list_files newest first yields every file exactly once', async () => {
    const { seen, count } = await pages('list_files', { sort: 'modified' }, (sc) =>
      (sc.files ?? []).map((f: { path: string }) => f.path),
    );
    expect(count).toBeGreaterThan(5);
    expect(seen.length).toBe(expected.length);
    expect([...seen].sort()).toEqual(expected);
  });

  it('list_dir yields every entry exactly once, by name (streamed) and by time (bounded heap)', async () => {
    const dirs = [...new Set(expected.map((p) => p.slice(0, 5)))];
    for (const sort of ['name', 'modified']) {
      const { seen, count } = await pages('list_dir', { recursive: true, sort }, (sc) =>
        dirEntries(sc).map((e) => e.path),
      );
      expect(count, sort).toBeGreaterThan(5);
      expect([...seen].sort(), sort).toEqual([...dirs, ...expected].sort());
      if (sort === 'name') expect(seen.filter((p) => p.includes('/'))).toEqual(expected);
    }
  });

  it('search_text yields every match exactly once, in path order', async () => {
    const { seen, count } = await pages('search_text', { query: 'needle', max_results: 10_000 }, (sc) =>
      (sc.matches ?? []).map((m: { path: string }) => m.path),
    );
    expect(count).toBeGreaterThan(5);
    expect(seen).toEqual(expected);
  });
});
