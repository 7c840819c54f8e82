// A confinement attack (docs/tools.md#paths, docs/design-notes.md#symlink-races): the symlink swap race. A
// swapper exchanges the real directory `race/` with `race_swap -> <outside dir>` (renameat2 RENAME_EXCHANGE,
// tight loop) while the file tools are called 500 times each (the two searches 200 times) against the real
// server bin; no result may carry an outside byte and the outside directory must stay byte-for-byte unchanged.
import { randomBytes } from 'node:crypto';
import { symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  callWithin,
  inLanes,
  patch,
  png,
  startSwapper,
  toolFailures,
  type Swapper,
  type ToolAnswer,
  unswap,
} from '../helpers/confinement.js';
import { snapshotTree, treeChanges, type Snapshot } from '../helpers/tree-snapshot.js';
import { dirEntries } from '../helpers/list-dir.js';
import { startServer, type SpawnedServer } from '../helpers/server.js';
import { makeWorkspace, type TempWorkspace } from '../helpers/workspace.js';

const ATTEMPTS = 500;
/**
 * The searches' calls: each spawns ripgrep, several times the cost of a read. 200 still meet every state many
 * times over (measured: each state of the walk and each kind of answer 14 times or more in 200 calls, 75 or more
 * in 500), where the other tools' rarest answer can be as rare as 7 in 500: they keep their 500.
 */
const SEARCH_ATTEMPTS = 200;
const LANES = 4; // a few concurrent calls, as an attacker would send them
const MIN_SWAPS = 100; // fewer means the race was not exercised: fail instead of passing vacuously
const SWAPPER_MAX_S = 240; // the swapper's own bound; each test stops it as soon as its calls are done
const TEST_CEILING_MS = 300_000;

const hex = randomBytes(8).toString('hex');
const INSIDE_TEXT = `INSIDE-MARK-${hex}\n`;
const CANARY = `OUTSIDE-MARK-${hex}`;
const QUERY = `(INSIDE|OUTSIDE)-MARK-${hex}`; // matches the inside file and the canary alike
const OUTSIDE_ONLY = `outside-only-${hex}.txt`;
const INSIDE_PNG = png(4, 3);
const OUTSIDE_PNG = png(5, 7, 0x20);
const OUTSIDE_PNG_B64 = OUTSIDE_PNG.toString('base64');

let ws: TempWorkspace;
let outside: TempWorkspace;
let srv: SpawnedServer;
/** The outside directory just before the current test's swapper started. */
let baseline: Snapshot;
let swapper: Swapper | undefined;
const race = () => path.join(ws.dir, 'race');
const raceSwap = () => path.join(ws.dir, 'race_swap');

beforeAll(async () => {
  ws = makeWorkspace({
    'race/secret.txt': INSIDE_TEXT,
    'race/p.png': INSIDE_PNG,
    'race/victim.txt': 'victim\n',
    'notes.txt': 'notes\n',
  });
  outside = makeWorkspace({
    'secret.txt': `${CANARY}\n`,
    'p.png': OUTSIDE_PNG,
    'victim.txt': 'victim\n',
    [OUTSIDE_ONLY]: `${CANARY}\n`,
  });
  symlinkSync(outside.dir, raceSwap());
  srv = await startServer({ workspace: ws.dir });
});

afterEach(async () => {
  await swapper?.kill();
  swapper = undefined;
  unswap(race(), raceSwap()); // a killed swapper may leave the pair exchanged
});

afterAll(async () => {
  await srv?.stop('SIGKILL');
  ws?.cleanup();
  outside?.cleanup();
});

interface Tally {
  attempts: number;
  swaps: number;
  ok: number;
  refused: Record<string, number>;
  internal: string[];
  leaks: string[];
  wrong: string[];
  states: Record<string, number>;
  /** Where this test's part of the server log starts. */
  logFrom: number;
}

/** A successful answer's problem (bytes that are not the inside ones), and which state it showed. */
type Judge = (r: ToolAnswer, i: number) => { problem?: string; state?: string };

function leaked(r: ToolAnswer): boolean {
  return r.raw.includes(CANARY) || r.raw.includes(OUTSIDE_ONLY) || r.raw.includes(OUTSIDE_PNG_B64);
}

/** Calls `make(i)` `attempts` times while the swapper runs; every answer is classified. */
async function underSwap(
  label: string,
  make: (i: number) => { name: string; args: Record<string, unknown> },
  judge: Judge = () => ({}),
  attempts = ATTEMPTS,
): Promise<Tally> {
  const t: Tally = {
    attempts,
    swaps: 0,
    ok: 0,
    refused: {},
    internal: [],
    leaks: [],
    wrong: [],
    states: {},
    logFrom: srv.stderr().length,
  };
  baseline = snapshotTree(outside.dir);
  swapper = await startSwapper(race(), raceSwap(), SWAPPER_MAX_S);
  await inLanes(attempts, LANES, async (i) => {
    const { name, args } = make(i);
    const r = await callWithin(srv.url, name, args);
    if (leaked(r)) t.leaks.push(`#${i} ${r.raw.slice(0, 300)}`);
    if (!r.isError) {
      t.ok++;
      const j = judge(r, i);
      if (j.problem) t.wrong.push(`#${i} ${j.problem}`);
      if (j.state) t.states[j.state] = (t.states[j.state] ?? 0) + 1;
    } else if (r.code === 'INTERNAL_ERROR') t.internal.push(`#${i} ${JSON.stringify(r.sc).slice(0, 300)}`);
    else t.refused[r.code as string] = (t.refused[r.code as string] ?? 0) + 1;
  });
  t.swaps = await swapper.stop();
  swapper = undefined;
  const { swaps, ok, refused, states } = t;
  const counts = { attempts, swaps, ok, refused, states };
  console.log(
    `[swap race] ${label}: ${JSON.stringify(counts)} leaks=${t.leaks.length} wrong=${t.wrong.length} internal=${t.internal.length}`,
  );
  return t;
}

/** The race was real, nothing outside leaked or changed, and nothing failed as INTERNAL_ERROR. */
function expectHeld(t: Tally, states: 'ok-and-refused' | string[]) {
  expect(
    t.swaps,
    `the swapper made only ${t.swaps} exchanges: the race was not exercised`,
  ).toBeGreaterThanOrEqual(MIN_SWAPS);
  const sample = (xs: string[]) => `${xs.length}/${t.attempts}: ${xs.slice(0, 3).join(' | ')}`;
  expect.soft(t.leaks.length, `results carried outside bytes ${sample(t.leaks)}`).toBe(0);
  expect.soft(t.wrong.length, `successful results were not the inside ones ${sample(t.wrong)}`).toBe(0);
  const logged = t.internal.length
    ? ` — server log: ${toolFailures(srv.stderr().slice(t.logFrom)).join(' | ')}`
    : '';
  expect.soft(t.internal.length, `INTERNAL_ERROR ${t.internal.length}/${t.attempts}${logged}`).toBe(0);
  const diff = treeChanges(baseline, snapshotTree(outside.dir));
  if (diff.length)
    console.log(`[swap race] the outside directory changed: ${JSON.stringify(diff.slice(0, 10))}`);
  expect.soft(diff, 'the outside directory changed').toEqual([]);
  if (states === 'ok-and-refused') {
    const refused = Object.values(t.refused).reduce((a, b) => a + b, 0);
    expect(t.ok, 'no call succeeded: the inside state was never seen').toBeGreaterThan(0);
    expect(refused, 'no call was refused: the swapped state was never seen').toBeGreaterThan(0);
  } else {
    for (const s of states)
      expect(t.states[s] ?? 0, `no successful result showed state ${s}`).toBeGreaterThan(0);
  }
}

const names = (r: ToolAnswer, key: 'files' | 'matches'): string[] =>
  ((r.sc?.[key] ?? []) as Array<{ path: string }>).map((e) => e.path);
const INSIDE_NAMES = ['p.png', 'secret.txt', 'victim.txt'];
/** Paths a listing of the workspace may show: the two names of the pair and the inside files under either. */
const ALLOWED = new Set([
  'notes.txt',
  'race',
  'race_swap',
  ...INSIDE_NAMES.flatMap((n) => [`race/${n}`, `race_swap/${n}`]),
]);
/** Which name the inside directory had during a walk of the workspace. */
function walkState(paths: string[]): string {
  const s = ['race', 'race_swap'].filter((d) => paths.includes(`${d}/secret.txt`));
  return s.length ? s.join('+') : 'none';
}

describe('swap race: read tools never return an outside byte (docs/design-notes.md#symlink-races)', () => {
  it(
    'attack: read_file race/secret.txt while race/ is swapped with a symlink to an outside dir',
    async () => {
      const t = await underSwap(
        'read_file race/secret.txt',
        () => ({ name: 'read_file', args: { path: 'race/secret.txt' } }),
        (r) => (r.sc.content === INSIDE_TEXT ? {} : { problem: `content ${JSON.stringify(r.sc.content)}` }),
      );
      expectHeld(t, 'ok-and-refused');
    },
    TEST_CEILING_MS,
  );

  it(
    'attack: view_image race/p.png while race/ is swapped with a symlink to an outside dir',
    async () => {
      const t = await underSwap(
        'view_image race/p.png',
        () => ({ name: 'view_image', args: { path: 'race/p.png' } }),
        (r) => {
          const img = r.content.find((c) => c.type === 'image');
          return img?.data === INSIDE_PNG.toString('base64')
            ? {}
            : { problem: 'image bytes are not the inside PNG' };
        },
      );
      expectHeld(t, 'ok-and-refused');
    },
    TEST_CEILING_MS,
  );

  it(
    'attack: search_text {path:"race"} for the canary while race/ is swapped',
    async () => {
      const t = await underSwap(
        'search_text path=race',
        () => ({ name: 'search_text', args: { query: QUERY, regex: true, path: 'race' } }),
        (r) => {
          const p = names(r, 'matches').filter((m) => m !== 'race/secret.txt');
          return p.length ? { problem: `matches in ${p.join(', ')}` } : {};
        },
        SEARCH_ATTEMPTS,
      );
      expectHeld(t, 'ok-and-refused');
    },
    TEST_CEILING_MS,
  );

  it(
    'attack: search_text {path:"."} for the canary while race/ is swapped',
    async () => {
      const t = await underSwap(
        'search_text path=.',
        () => ({ name: 'search_text', args: { query: QUERY, regex: true, path: '.' } }),
        (r) => {
          const paths = names(r, 'matches');
          const p = paths.filter((m) => !ALLOWED.has(m));
          return p.length ? { problem: `matches in ${p.join(', ')}` } : { state: walkState(paths) };
        },
        SEARCH_ATTEMPTS,
      );
      // The inside file was found under both of its names: the walk really ran during the swaps.
      expectHeld(t, ['race', 'race_swap']);
    },
    TEST_CEILING_MS,
  );

  it(
    'attack: list_dir race while race/ is swapped',
    async () => {
      const t = await underSwap(
        'list_dir race',
        () => ({ name: 'list_dir', args: { path: 'race', max_entries: 100_000 } }),
        (r) => {
          const p = dirEntries(r.sc, 'race')
            .map((e) => e.path)
            .filter((e) => !ALLOWED.has(e));
          return p.length ? { problem: `entries ${p.join(', ')}` } : {};
        },
      );
      expectHeld(t, 'ok-and-refused');
    },
    TEST_CEILING_MS,
  );

  it(
    'attack: list_dir {path:".", recursive} while race/ is swapped',
    async () => {
      const t = await underSwap(
        'list_dir . recursive',
        () => ({
          name: 'list_dir',
          args: { path: '.', recursive: true, max_depth: 3, max_entries: 100_000 },
        }),
        (r) => {
          const paths = dirEntries(r.sc).map((e) => e.path);
          const p = paths.filter((e) => !ALLOWED.has(e));
          return p.length ? { problem: `entries ${p.join(', ')}` } : { state: walkState(paths) };
        },
      );
      expectHeld(t, ['race', 'race_swap']);
    },
    TEST_CEILING_MS,
  );

  it(
    'attack: list_files {path:"race"} while race/ is swapped',
    async () => {
      const t = await underSwap(
        'list_files race',
        () => ({ name: 'list_files', args: { path: 'race', max_results: 100_000 } }),
        (r) => {
          const p = names(r, 'files').filter((f) => !ALLOWED.has(f));
          return p.length ? { problem: `files ${p.join(', ')}` } : {};
        },
      );
      expectHeld(t, 'ok-and-refused');
    },
    TEST_CEILING_MS,
  );

  it(
    'attack: list_files {path:"."} while race/ is swapped',
    async () => {
      const t = await underSwap(
        'list_files .',
        () => ({ name: 'list_files', args: { path: '.', max_results: 100_000 } }),
        (r) => {
          const paths = names(r, 'files');
          const p = paths.filter((f) => !ALLOWED.has(f));
          return p.length ? { problem: `files ${p.join(', ')}` } : { state: walkState(paths) };
        },
      );
      expectHeld(t, ['race', 'race_swap']);
    },
    TEST_CEILING_MS,
  );
});

describe('swap race: apply_patch never creates, changes, renames or deletes outside', () => {
  beforeAll(() => {
    // Same names and contents on both sides, so a write that follows the link would match and succeed.
    for (let i = 0; i < ATTEMPTS; i++) {
      for (const dir of [race(), outside.dir]) {
        writeFileSync(path.join(dir, `victim_${i}.txt`), 'victim\n');
        writeFileSync(path.join(dir, `m_${i}.txt`), 'm\n');
      }
      writeFileSync(path.join(ws.dir, `top_${i}.txt`), 'm\n');
    }
  });

  it(
    'attack: Add File race/new_N.txt while race/ is swapped',
    async () => {
      const t = await underSwap('apply_patch add', (i) => ({
        name: 'apply_patch',
        args: { patch: patch(`*** Add File: race/new_${i}.txt`, `+new ${i}`) },
      }));
      expectHeld(t, 'ok-and-refused');
    },
    TEST_CEILING_MS,
  );

  it(
    'attack: Update File race/victim.txt while race/ is swapped',
    async () => {
      const t = await underSwap('apply_patch update', (i) => ({
        name: 'apply_patch',
        args: { patch: patch('*** Update File: race/victim.txt', '@@', ` victim`, `+line ${i}`) },
      }));
      expectHeld(t, 'ok-and-refused');
    },
    TEST_CEILING_MS,
  );

  it(
    'attack: Delete File race/victim_N.txt while race/ is swapped',
    async () => {
      const t = await underSwap('apply_patch delete', (i) => ({
        name: 'apply_patch',
        args: { patch: patch(`*** Delete File: race/victim_${i}.txt`) },
      }));
      expectHeld(t, 'ok-and-refused');
    },
    TEST_CEILING_MS,
  );

  it(
    'attack: Update File + Move to, into, out of and within race/ while it is swapped',
    async () => {
      const moves: Array<(i: number) => [string, string]> = [
        (i) => [`race/m_${i}.txt`, `race/moved_${i}.txt`], // within: through the link, an outside rename
        (i) => [`top_${i}.txt`, `race/top_${i}.txt`], // into: through the link, an outside create
        (i) => [`race/m_${i}.txt`, `back_${i}.txt`], // out of: through the link, an outside delete
      ];
      const t = await underSwap('apply_patch update+move', (i) => {
        const [from, to] = (moves[i % 3] as (i: number) => [string, string])(i);
        return {
          name: 'apply_patch',
          args: { patch: patch(`*** Update File: ${from}`, `*** Move to: ${to}`, '@@', '-m', `+moved ${i}`) },
        };
      });
      expectHeld(t, 'ok-and-refused');
    },
    TEST_CEILING_MS,
  );
});

describe('swap race: edit_file never creates or changes anything outside (README "Editing files")', () => {
  beforeAll(() => {
    // Same names and contents on both sides, so an edit that follows the link would match and succeed.
    for (let i = 0; i < ATTEMPTS; i++)
      for (const dir of [race(), outside.dir]) writeFileSync(path.join(dir, `e_${i}.txt`), 'e\n');
  });

  it(
    'attack: edit_file race/e_N.txt while race/ is swapped',
    async () => {
      const t = await underSwap('edit_file update', (i) => ({
        name: 'edit_file',
        args: { path: `race/e_${i}.txt`, old_string: 'e\n', new_string: `edited ${i}\n` },
      }));
      expectHeld(t, 'ok-and-refused');
    },
    TEST_CEILING_MS,
  );

  it(
    'attack: edit_file creates race/enew_N.txt (empty old_string) while race/ is swapped',
    async () => {
      const t = await underSwap('edit_file create', (i) => ({
        name: 'edit_file',
        args: { path: `race/enew_${i}.txt`, old_string: '', new_string: `new ${i}\n` },
      }));
      expectHeld(t, 'ok-and-refused');
    },
    TEST_CEILING_MS,
  );
});
