// docs/benchmarks.md#search-on-a-small-tree: ripgrep searches a base last counted small (at most
// SMALL_TREE_ENTRIES entries by the confined walk's rules) with one thread, any other with its default; the
// count runs only through the server's `defer` (after the answers), once per base at a time, and is trusted
// for TREE_SIZE_TTL_MS (a large count for LARGE_TREE_TTL_MS). The thread count never changes a page. Real
// trees, real rg; the clock is the test's.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { checkRoot, type WorkspaceRoot } from '../../src/workspace/paths.js';
import { findRipgrep, SearchEngines } from '../../src/workspace/search/engines.js';
import { rgArgs, searchRipgrep } from '../../src/workspace/search/ripgrep.js';
import {
  SMALL_TREE_ENTRIES,
  TREE_SIZE_TTL_MS,
  LARGE_TREE_TTL_MS,
  treeIsSmall,
  TreeSizes,
  type TreeBase,
} from '../../src/workspace/search/tree-size.js';
import type { SearchRequest } from '../../src/workspace/search/types.js';
import { makeWorkspace, type TempWorkspace } from '../helpers/workspace.js';

/** `n` small files spread over ten directories below `dir` (relative paths). */
function files(dir: string, n: number, text = 'nothing\n'): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i < n; i++) out[`${dir}/d${i % 10}/f${i}.txt`] = text;
  return out;
}

function rootOf(ws: TempWorkspace): WorkspaceRoot {
  const r = checkRoot(ws.dir, '/nonexistent-home');
  if (!r.ok) throw new Error(r.reason);
  return r.root;
}

function request(root: WorkspaceRoot, over: Partial<SearchRequest> = {}): SearchRequest {
  return {
    query: 'needle',
    regex: false,
    caseSensitive: undefined,
    baseAbs: root.lexical,
    baseReal: root.real,
    baseRel: '.',
    baseIsFile: false,
    includeGlobs: [],
    excludeGlobs: [],
    contextLines: 0,
    maxResults: 50,
    maxPreviewBytes: 200,
    includeHidden: false,
    includeIgnored: false,
    ...over,
  };
}

const baseOf = (root: WorkspaceRoot, over: Partial<TreeBase> = {}): TreeBase => ({
  abs: root.lexical,
  real: root.real,
  rel: '.',
  includeHidden: false,
  includeIgnored: false,
  ...over,
});

describe('a small tree, counted by the walk', () => {
  // Just small: what the walk visits (src, its ten directories and their files) comes to SMALL_TREE_ENTRIES; what
  // it leaves out (node_modules, the hidden .gitignore and .cache, the .gitignore'd gen/) is far larger.
  const entries = SMALL_TREE_ENTRIES - 11;
  let ws: TempWorkspace;
  let root: WorkspaceRoot;
  beforeAll(() => {
    ws = makeWorkspace({
      ...files('src', entries - 1),
      'src/keep.txt': 'needle\n',
      '.gitignore': 'gen/\n',
      ...files('node_modules', 2 * SMALL_TREE_ENTRIES),
      ...files('.cache', SMALL_TREE_ENTRIES),
      ...files('gen', SMALL_TREE_ENTRIES),
    });
    root = rootOf(ws);
  });
  afterAll(() => ws.cleanup());

  it('is small by the rules rg searches with, and no longer once it holds one entry more', async () => {
    expect(await treeIsSmall(root, baseOf(root))).toBe(true);
    // node_modules, .cache and gen/ count where rg would search them.
    expect(await treeIsSmall(root, baseOf(root, { includeIgnored: true }))).toBe(false);
    expect(await treeIsSmall(root, baseOf(root, { includeHidden: true }))).toBe(false);
    ws.write('src/one-more.txt', 'x\n');
    expect(await treeIsSmall(root, baseOf(root))).toBe(false);
  });
});

describe('when a base is counted', () => {
  const base: TreeBase = { abs: '/w', real: '/w', rel: '.', includeHidden: false, includeIgnored: false };

  it('only through defer, once at a time, and again only after TREE_SIZE_TTL_MS (a large one after LARGE_TREE_TTL_MS)', async () => {
    const clock = new ManualClock();
    const deferred: Array<() => void> = [];
    let counts = 0;
    let answer = true;
    const sizes = new TreeSizes<TreeBase>(
      clock,
      (fn) => deferred.push(fn),
      async () => {
        counts++;
        return answer;
      },
    );
    expect(sizes.small(base)).toBeUndefined();
    expect(sizes.small(base)).toBeUndefined();
    // Asked once, and not run before the server's quiet moment.
    expect([deferred.length, counts]).toEqual([1, 0]);
    deferred.shift()?.();
    await vi.waitFor(() => expect(sizes.small(base)).toBe(true));
    expect(counts).toBe(1);
    // The same base with other rules is another count.
    expect(sizes.small({ ...base, includeIgnored: true })).toBeUndefined();
    expect(deferred.length).toBe(1);
    deferred.length = 0;
    clock.advance(TREE_SIZE_TTL_MS - 1);
    expect(sizes.small(base)).toBe(true);
    expect(deferred.length).toBe(0);
    clock.advance(1);
    answer = false;
    // Old: the last answer still holds while the next count is asked for.
    expect(sizes.small(base)).toBe(true);
    expect(deferred.length).toBe(1);
    deferred.shift()?.();
    await vi.waitFor(() => expect(sizes.small(base)).toBe(false));
    // A large count holds for LARGE_TREE_TTL_MS: a minute later nothing is asked for.
    const countedLarge = counts;
    clock.advance(TREE_SIZE_TTL_MS);
    expect(sizes.small(base)).toBe(false);
    expect(deferred.length).toBe(0);
    clock.advance(LARGE_TREE_TTL_MS - TREE_SIZE_TTL_MS - 1);
    expect(sizes.small(base)).toBe(false);
    expect(deferred.length).toBe(0);
    clock.advance(1);
    answer = true;
    expect(sizes.small(base)).toBe(false);
    expect(deferred.length).toBe(1);
    deferred.shift()?.();
    await vi.waitFor(() => expect(sizes.small(base)).toBe(true));
    expect(counts).toBe(countedLarge + 1);
  });

  it('the warm-up counts at once, without defer', async () => {
    const deferred: Array<() => void> = [];
    const sizes = new TreeSizes<TreeBase>(
      new ManualClock(),
      (fn) => deferred.push(fn),
      async () => true,
    );
    await sizes.countNow(base);
    expect(sizes.small(base)).toBe(true);
    expect(deferred.length).toBe(0);
  });

  it('a count that fails leaves the base unknown, and the next search asks again', async () => {
    const deferred: Array<() => void> = [];
    const sizes = new TreeSizes<TreeBase>(
      new ManualClock(),
      (fn) => deferred.push(fn),
      () => Promise.reject(new Error('gone')),
    );
    expect(sizes.small(base)).toBeUndefined();
    deferred.shift()?.();
    await vi.waitFor(() => {
      expect(sizes.small(base)).toBeUndefined();
      expect(deferred.length).toBe(1);
    });
  });
});

describe('the search engine on a small and on a large tree', () => {
  const rg = findRipgrep({ PATH: process.env.PATH ?? '' });
  let small: TempWorkspace;
  let large: TempWorkspace;
  beforeAll(() => {
    const needles = { 'a/needle.txt': 'a needle here\n', 'z/last.txt': 'needle\nneedle again\n' };
    small = makeWorkspace({ ...files('src', 40), ...needles });
    large = makeWorkspace({ ...files('src', SMALL_TREE_ENTRIES + 50), ...needles });
  });
  afterAll(() => {
    small.cleanup();
    large.cleanup();
  });

  it('rg gets --threads only when asked, and never beside --sort path', () => {
    const root = rootOf(small);
    expect(rgArgs(request(root))).not.toContain('--threads');
    const one = rgArgs({ ...request(root), threads: 1 });
    expect(one.slice(one.indexOf('--threads'), one.indexOf('--threads') + 2)).toEqual(['--threads', '1']);
    const sorted = rgArgs({ ...request(root), threads: 1, sorted: true });
    expect(sorted).toContain('--sort');
    expect(sorted).not.toContain('--threads');
  });

  it('one thread on the small tree once counted, the default on the large one and on a file', async () => {
    const deferred: Array<() => void> = [];
    const engines = new SearchEngines({ PATH: process.env.PATH ?? '' }, undefined, {
      clock: new ManualClock(),
      defer: (fn) => deferred.push(fn),
    });
    const [s, l] = [rootOf(small), rootOf(large)];
    // What the warm-up does for the workspace root: counted before any search.
    const warmed = new SearchEngines({ PATH: process.env.PATH ?? '' }, undefined, {
      clock: new ManualClock(),
      defer: (fn) => deferred.push(fn),
    });
    await warmed.warm(s);
    expect(warmed.threadsFor(s, request(s))).toBe(rg.kind === 'ripgrep' ? 1 : undefined);
    expect(deferred.length).toBe(0);
    expect(engines.threadsFor(s, request(s))).toBeUndefined();
    expect(engines.threadsFor(l, request(l))).toBeUndefined();
    expect(deferred.length).toBe(2);
    for (const fn of deferred.splice(0)) fn();
    await vi.waitFor(() => expect(engines.threadsFor(s, request(s))).toBe(1), { timeout: 30_000 });
    await vi.waitFor(() => expect(deferred.length).toBe(0), { timeout: 30_000 });
    expect(engines.threadsFor(l, request(l))).toBeUndefined();
    const file = {
      baseAbs: `${s.lexical}/a/needle.txt`,
      baseReal: `${s.real}/a/needle.txt`,
      baseIsFile: true,
    };
    expect(engines.threadsFor(s, request(s, { ...file, baseRel: 'a/needle.txt' }))).toBeUndefined();
  });

  it.skipIf(rg.kind !== 'ripgrep')('one thread finds the same page as rg’s default', async () => {
    if (rg.kind !== 'ripgrep') return;
    for (const ws of [small, large]) {
      const root = rootOf(ws);
      const env = { PATH: process.env.PATH ?? '', LANG: 'C.UTF-8' };
      const pool = await searchRipgrep(rg.path, root, request(root), env);
      const one = await searchRipgrep(rg.path, root, request(root), env, undefined, 1);
      expect(one.page.map((c) => c.match)).toEqual(pool.page.map((c) => c.match));
      expect(one.page.length).toBe(3);
    }
  });
});
