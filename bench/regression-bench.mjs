// `npm run bench:regression` (docs/benchmarks.md#refactoring-without-regressions): the current build against an
// earlier commit's, in one run, on the ~9 k-file benchmark workspace. The earlier commit is built in a temporary
// git worktree (node_modules shared); both servers run side by side and are measured in alternating rounds, so
// the machine's noise falls on both (servers of the earlier build again are the control whose ratio shows
// that noise): per call, wall-clock p50 and server CPU (from /proc/<pid>/schedstat) of
// tools/list, read_file (4 KB), search_text and exec_command `true`. Two servers of one build differ by up to
// ±15 % in per-call CPU for as long as they run (the JIT's choices, heap layout), so one server per build
// compared processes more than builds: each of the three groups is `--servers` processes (default 3), each
// measured every round, and a group's figure is the median over its servers of each server's median. A server
// that also runs searches and commands spread further (tools/list's and read_file's per-call CPU 1.13-1.27x
// between four servers of one build, whatever the heap flags; 1.04-1.09x for servers that answer only those
// two), so each group has that many servers for the light calls and as many again for the heavy ones.
// On a machine of two CPUs or more (and taskset), the servers run on the last CPU and this client on the
// first, so that where the scheduler put a server (beside the client or not) is not part of its per-call CPU.
// Target: every ratio ≤ 1.05 (no regression beyond noise). Results: bench/results/regression.{json,md}.
// Usage: npm run bench:regression [-- --base <commit>] [--calls 300] [--rounds 6] [--warmup 5] [--servers 3]
//        [--mode safe|dangerous] [--no-pin]
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import http from 'node:http';
import { availableParallelism, tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import {
  benchWorkspace,
  cpuNs,
  ensureBuilt,
  httpToolClient,
  median,
  REPO,
  round,
  startServer,
  toolsListOnce,
  writeResults,
} from './lib.mjs';

const { values } = parseArgs({
  options: {
    // The last commit before the composition root and the typed results (docs/architecture.md).
    base: { type: 'string', default: '274dea4' },
    calls: { type: 'string', default: '300' },
    rounds: { type: 'string', default: '6' },
    // Rounds of every call kind before the measured ones: a long-running server's steady state, not its JIT
    // warming (with one, per-call CPU still fell round after round, faster for the smaller build).
    warmup: { type: 'string', default: '5' },
    servers: { type: 'string', default: '3' },
    // safe (the default) runs each command in its sandbox; dangerous runs it bare, which leaves the server's
    // own path: what a refactor could have made slower.
    mode: { type: 'string', default: 'safe' },
    'no-pin': { type: 'boolean', default: false },
  },
});
const CALLS = Number(values.calls);
const ROUNDS = Number(values.rounds);
const WARMUP = Number(values.warmup);
const SERVERS = Number(values.servers);
const CPUS = availableParallelism();
const PIN = !values['no-pin'] && CPUS >= 2 && spawnSync('taskset', ['-V']).status === 0;
/** The pause after each server's round (measureSettled). */
const SETTLE_MS = 250;
/** The CPU the servers run on when pinned (the client takes CPU 0). */
const SERVER_CPU = PIN ? CPUS - 1 : undefined;

/** The earlier commit, built in a temporary worktree; returns its bin and a cleanup. */
function buildBase(commit) {
  const dir = mkdtempSync(path.join(tmpdir(), 'wb-regress-'));
  execFileSync('git', ['worktree', 'add', '--detach', dir, commit], { cwd: REPO, stdio: 'ignore' });
  symlinkSync(path.join(REPO, 'node_modules'), path.join(dir, 'node_modules'));
  const r = spawnSync('npm', ['run', 'build', '--silent'], { cwd: dir, stdio: 'inherit' });
  if (r.status !== 0) throw new Error(`building ${commit} failed`);
  return {
    bin: path.join(dir, 'dist/cli/main.js'),
    cleanup: () => {
      spawnSync('git', ['worktree', 'remove', '--force', dir], { cwd: REPO, stdio: 'ignore' });
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const CALLS_BY_NAME = {
  'tools/list': null,
  read_file: { path: 'mcp-bench/small.js' },
  search_text: { query: 'createServer', max_results: 20 },
  'exec_command true': { cmd: 'true' },
};
/** The call kinds each server of a group makes: the light ones and the heavy ones on servers of their own. */
const ROLES = { light: ['tools/list', 'read_file'], heavy: ['search_text', 'exec_command true'] };
const roleOf = (name) => (ROLES.light.includes(name) ? 'light' : 'heavy');

/** One round of one server: per call kind of its role, [wall p50 ms, server CPU µs per call]. */
async function measure({ srv, role }) {
  const client = httpToolClient(srv.url, srv.token);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const out = {};
  try {
    for (const name of ROLES[role]) {
      const args = CALLS_BY_NAME[name];
      const n = name.startsWith('exec') || name === 'search_text' ? Math.ceil(CALLS / 5) : CALLS;
      const times = [];
      const before = cpuNs(srv.pid);
      for (let i = 0; i < n; i++) {
        const t0 = performance.now();
        if (args === null) await toolsListOnce(srv, agent);
        else {
          const r = await client.callTool(name.split(' ')[0], args);
          if (r.isError) throw new Error(`${name}: ${JSON.stringify(r.structuredContent)}`);
        }
        times.push(performance.now() - t0);
      }
      out[name] = [median(times), (cpuNs(srv.pid) - before) / n / 1000];
    }
  } finally {
    client.close();
    agent.destroy();
  }
  return out;
}

/**
 * A server's round, then a pause: what its calls left for a quiet moment (the next sandbox or jail prepared, on
 * the one CPU every server is pinned to) runs before the next server is measured, not during its calls.
 */
async function measureSettled(s) {
  const m = await measure(s);
  await new Promise((r) => setTimeout(r, SETTLE_MS));
  return m;
}

async function main() {
  ensureBuilt();
  const ws = benchWorkspace();
  if (!existsSync(path.join(ws, 'mcp-bench/small.js')))
    throw new Error('the benchmark workspace has no mcp-bench/small.js');
  const base = buildBase(values.base);
  const env = { SERVICE_STATE_DIR: 'off', SERVICE_CONSOLE: '0', SERVICE_PERMISSION_MODE: values.mode };
  /** Per group, its servers ({srv, role}); a server's rounds go into got[group][server]. */
  const groups = { before: [], now: [], control: [] };
  if (PIN) spawnSync('taskset', ['-a', '-p', '-c', '0', String(process.pid)], { stdio: 'ignore' });
  try {
    const start = (bin) => startServer(ws, env, bin, undefined, SERVER_CPU);
    for (let i = 0; i < SERVERS; i++)
      for (const role of Object.keys(ROLES)) {
        groups.before.push({ srv: await start(base.bin), role });
        groups.now.push({ srv: await start(undefined), role });
        groups.control.push({ srv: await start(base.bin), role });
      }
    const all = Object.values(groups).flat();
    // Warm-up: modules, JIT, the command helper.
    for (let r = 0; r < WARMUP; r++) for (const s of all) await measureSettled(s);
    const got = Object.fromEntries(Object.entries(groups).map(([g, list]) => [g, list.map(() => [])]));
    const slots = Object.entries(groups).flatMap(([g, list]) => list.map((_, i) => [g, i]));
    // Each round visits every server once, starting one further along, so no group is always first or last.
    for (let r = 0; r < ROUNDS; r++)
      for (let k = 0; k < slots.length; k++) {
        const [g, i] = slots[(k + r) % slots.length];
        got[g][i].push(await measureSettled(groups[g][i]));
      }
    /** A group's figure: the median over its servers of the call's role of each server's median over the rounds. */
    const figure = (g, name, i) =>
      median(
        got[g]
          .filter((_, k) => groups[g][k].role === roleOf(name))
          .map((rounds) => median(rounds.map((m) => m[name][i]))),
      );
    const rows = [];
    for (const name of Object.keys(CALLS_BY_NAME))
      for (const [i, what] of [
        [0, 'wall p50'],
        [1, 'server CPU per call'],
      ]) {
        const now = figure('now', name, i);
        const before = figure('before', name, i);
        const control = figure('control', name, i);
        const ratio = now / before;
        rows.push({
          target: `${name}: ${what}, now vs ${values.base} (${values.mode})`,
          measured: round(ratio, 3),
          unit: '×',
          limit: 1.05,
          pass: ratio <= 1.05,
          note:
            `${round(now, i ? 1 : 3)} vs ${round(before, i ? 1 : 3)} ${i ? 'µs' : 'ms'} (${SERVERS} servers a build for the ${roleOf(name)} calls, ${ROUNDS} rounds${PIN ? ', servers pinned to one CPU' : ''}); ` +
            `noise in the same run, ${values.base} vs itself: ${round(control / before, 3)}×`,
        });
      }
    const file = values.mode === 'safe' ? 'regression' : `regression-${values.mode}`;
    writeResults(file, `The current build against ${values.base}, side by side (${values.mode} mode)`, rows, {
      servers: SERVERS,
      pinned: PIN,
      rounds: got,
    });
  } finally {
    for (const { srv } of Object.values(groups).flat()) await srv.stop();
    base.cleanup();
  }
}

await main();
