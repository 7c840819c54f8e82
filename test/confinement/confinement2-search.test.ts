// search_text as an oracle on outside files (README "Security model", search_text: no byte, name or count
// from outside reaches a result). A swapper (test/helpers/swapper.py) exchanges the workspace directory
// `race/` with `race_swap -> /etc` in a tight loop while search_text looks for `^root:[*x]` in files named
// `shadow` (and `passwd`). The inside files never match, so every result must be the same empty answer:
// no match, no outside name or text, and no other field (ripgrep's answer replaced by the JS engine's,
// `engine: "js"`) that appears only when ripgrep, following the swapped directory, met a matching line in
// /etc. A control query that matches nothing anywhere must answer exactly the same. Server as root (the
// reader of /etc/shadow that a root server is).
import { randomBytes } from 'node:crypto';
import { symlinkSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import path from 'node:path';
import { inLanes, outcome, startSwapper, unswap, type Swapper } from '../helpers/confinement.js';
import { startServer, type SpawnedServer } from '../helpers/server.js';
import { makeWorkspace, type TempWorkspace } from '../helpers/workspace.js';
import { call } from '../exec/exec-support.js';

const CALLS_PER_QUERY = 150;
const MIN_SWAPS = 100;
const TEST_CEILING_MS = 300_000;
const root = process.getuid?.() === 0;
if (!root) {
  if (process.env.CI === 'true') throw new Error('the search oracle attack needs root under CI=true');
  console.log('SKIP the search oracle attack: the tests do not run as root (/etc/shadow is unreadable)');
}

describe.runIf(root)(
  'search_text is no oracle on outside files while a directory is swapped for a symlink to /etc',
  () => {
    const tag = randomBytes(4).toString('hex');
    let ws: TempWorkspace;
    let srv: SpawnedServer;
    let swapper: Swapper | undefined;
    const race = () => path.join(ws.dir, 'race');
    const raceSwap = () => path.join(ws.dir, 'race_swap');

    beforeAll(async () => {
      ws = makeWorkspace({
        'race/shadow': `nobody here ${tag}\n`,
        'race/passwd': `nobody here ${tag}\n`,
        'notes.txt': 'notes\n',
      });
      symlinkSync('/etc', raceSwap());
      srv = await startServer({ workspace: ws.dir });
    });
    afterEach(async () => {
      await swapper?.kill();
      swapper = undefined;
      unswap(race(), raceSwap());
    });
    afterAll(async () => {
      await srv?.stop('SIGKILL');
      ws?.cleanup();
    });

    it(
      `${CALLS_PER_QUERY}× each of ^root:[*x] in shadow, in passwd, and a control matching nothing: every answer is the same empty one (no match, no outside text, never engine "js")`,
      async () => {
        const info = await call(srv.url, 'server_info');
        const ripgrep = String(info.sc.search_engine).startsWith('ripgrep');
        const queries = [
          { query: '^root:[*x]', regex: true, include_globs: ['shadow'] },
          { query: '^root:[*x]', regex: true, include_globs: ['passwd'] },
          { query: `^root:no-such-${tag}`, regex: true, include_globs: ['shadow'] },
        ];
        const seen = new Map<string, number[]>(); // answer (without the query's own echo) -> which query gave it
        const leaks: string[] = [];
        const engines: Record<string, number> = {};
        swapper = await startSwapper(race(), raceSwap(), 240);
        await inLanes(CALLS_PER_QUERY * queries.length, 3, async (i) => {
          const q = i % queries.length;
          const o = await outcome(srv.url, 'search_text', queries[q] as Record<string, unknown>);
          const sc = o.answer?.sc ?? {};
          // The text echoes the query (which starts with ^root:); anything else that looks like /etc is a leak.
          const raw = (o.answer?.raw ?? o.word).split('^root:').join('^');
          if (/root:|\/etc\b|daemon:/.test(raw) || (sc.matches?.length ?? 0) > 0)
            leaks.push(`#${i} q${q} ${raw.slice(0, 200)}`);
          const engine = `q${q} ${o.word} ${sc.engine ?? 'ripgrep'}`;
          engines[engine] = (engines[engine] ?? 0) + 1;
          const key = `${o.word} ${JSON.stringify(sc)}`;
          seen.set(key, [...new Set([...(seen.get(key) ?? []), q])]);
        });
        const swaps = await swapper.stop();
        swapper = undefined;
        console.log(`[search oracle] swaps=${swaps} ${JSON.stringify(engines)}`);
        expect(swaps, 'the race was not exercised').toBeGreaterThanOrEqual(MIN_SWAPS);
        expect(leaks, `outside names or text reached ${leaks.length} result(s)`).toEqual([]);
        if (ripgrep) {
          const js = Object.entries(engines).filter(([k]) => k.endsWith(' js'));
          expect(js, 'engine "js" answered: ripgrep met an outside match (an oracle on /etc)').toEqual([]);
        }
        const answers = [...seen.entries()].map(([k, qs]) => `${k.slice(0, 160)} (queries ${qs.join(',')})`);
        expect(
          answers,
          'the answers differ between the queries: their distribution tells outside contents',
        ).toHaveLength(1);
      },
      TEST_CEILING_MS,
    );
  },
);
