// What confinement costs (README "Security model"): every command a sandbox of its own, and git and ripgrep in
// the jail of src/process/jail/jail.ts. In one run, in alternating batches so machine load falls on all alike:
// - exec_command `true` over HTTP in `safe` against spawnSync('sh', ['-c', 'true']) and against bwrap running
//   `true` with the same options (the per-command sandbox's own floor); target ≤ 8× the sh floor;
// - git_status against `git status --porcelain` direct and in the same jail (the floor it now runs on);
// - search_text against `rg -n` direct and in the same jail (ripgrep's own: its directory and the workspace
//   alone); targets ≤ 1.2× the jailed floor. Those two show what the server adds to the program, not what the
//   jail costs: for that, on a small repository (bench/direct-floors.mjs), git_status, git_diff, git_log and
//   search_text against git and rg run directly on the host with the same arguments; targets ≤ direct + 3 ms.
// On the ~9 k-file benchmark repository (bench/.cache/workspace). Results: bench/results/confinement.{json,md}.
// Usage: npm run build && node bench/confinement-bench.mjs [--samples 120] [--batch 10]
import { spawnSync } from 'node:child_process';
import { constants, cpSync, mkdtempSync, openSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import {
  benchWorkspace,
  ensureBuilt,
  httpToolCaller,
  median,
  REPO,
  round,
  runJailed,
  startServer,
  writeResults,
} from './lib.mjs';
import { directFloorRows } from './direct-floors.mjs';

const { values } = parseArgs({
  options: { samples: { type: 'string', default: '120' }, batch: { type: 'string', default: '10' } },
});
const SAMPLES = Number(values.samples);
const BATCH = Number(values.batch);

function timed(n, out, fn) {
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    const r = fn();
    out.push(performance.now() - t0);
    if (r.status !== 0 && r.status !== 1) throw new Error(`floor failed: ${r.stderr}`);
  }
}

async function timedCall(call, n, out, name, args, check) {
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    const r = await call(name, args);
    out.push(performance.now() - t0);
    if (!check(r.structuredContent ?? {}))
      throw new Error(`${name} failed: ${JSON.stringify(r).slice(0, 500)}`);
  }
}

/** A query with a moderate number of matches (under search_text's 1000-match default) in the workspace. */
function pickQuery(rg, ws) {
  for (const q of ['createServer', 'readFileSync', 'Promise.all', 'export default', 'require(']) {
    const r = spawnSync(rg, ['-n', '--fixed-strings', '-c', q, '.'], { cwd: ws, encoding: 'utf8' });
    const n = r.stdout.split('\n').reduce((a, l) => a + (Number(l.split(':').pop()) || 0), 0);
    if (n >= 20 && n <= 900) return { q, n };
  }
  return { q: 'function', n: NaN };
}

async function main() {
  ensureBuilt();
  const { ToolJail } = await import(path.join(REPO, 'dist/process/jail/jail.js'));
  const { findRipgrep } = await import(path.join(REPO, 'dist/workspace/search/engines.js'));
  const { createRuntimeDirs } = await import(path.join(REPO, 'dist/process/runtime-dir.js'));
  const load = loadavg()[0];
  const ws = mkdtempSync(path.join(tmpdir(), 'wb-conf-ws-'));
  cpSync(benchWorkspace(), ws, { recursive: true });
  const rt = mkdtempSync(path.join(tmpdir(), 'wb-conf-rt-'));
  const jail = new ToolJail({
    requested: 'auto',
    pathVar: process.env.PATH,
    workspaceReal: ws,
    dirs: createRuntimeDirs({ configured: rt }, ws),
    privateFiles: [],
  });
  if (!jail.status().in_use) throw new Error(`no jail here: ${jail.status().reason}`);
  const rg = findRipgrep(process.env).path;
  const { q, n: matches } = pickQuery(rg, ws);
  const srv = await startServer(ws, { SERVICE_PERMISSION_MODE: 'safe' });
  const call = httpToolCaller(srv.url, srv.token);
  const info = (await call('check_exec_environment', {})).structuredContent;
  if (info.sandbox?.in_use !== 'bwrap') throw new Error('the server has no sandbox here');
  const gitJ = jail.wrap('git', ['--no-optional-locks', 'status', '--porcelain'], ws);
  const rgArgs = ['-n', '--fixed-strings', q, '.'];
  // ripgrep is static: it runs in a jail of its own directory and the directory searched alone, given as a
  // descriptor (jail.ts wrapAlone), as search_text runs it.
  const wsFd = openSync(ws, constants.O_RDONLY | constants.O_DIRECTORY);
  const rgJ = jail.wrapAlone(rg, rgArgs, ws, wsFd);
  if (!jail.runsAlone(rg)) throw new Error('ripgrep does not run in a jail of the workspace alone here');
  const bwrapTrue = jail.wrap('true', [], ws);
  const m = { sh: [], bwrap: [], exec: [], git: [], gitJ: [], gitS: [], rg: [], rgJ: [], search: [] };
  try {
    const exited = (s) => s.status === 'exited';
    const ok = (s) => s.ok === true;
    for (let warm = 0; warm < 2; warm++) {
      await timedCall(call, 3, [], 'exec_command', { cmd: 'true' }, exited);
      await timedCall(call, 3, [], 'git_status', {}, ok);
      await timedCall(call, 3, [], 'search_text', { query: q }, ok);
    }
    while (m.exec.length < SAMPLES) {
      timed(BATCH, m.sh, () => spawnSync('sh', ['-c', 'true']));
      timed(BATCH, m.bwrap, () => runJailed(bwrapTrue, ws));
      await timedCall(call, BATCH, m.exec, 'exec_command', { cmd: 'true' }, exited);
      timed(BATCH, m.git, () =>
        spawnSync('git', ['--no-optional-locks', 'status', '--porcelain'], { cwd: ws }),
      );
      timed(BATCH, m.gitJ, () => runJailed(gitJ, ws));
      await timedCall(call, BATCH, m.gitS, 'git_status', {}, ok);
      timed(BATCH, m.rg, () => spawnSync(rg, rgArgs, { cwd: ws, maxBuffer: 64 * 1024 * 1024 }));
      timed(BATCH, m.rgJ, () => runJailed(rgJ, ws));
      await timedCall(call, BATCH, m.search, 'search_text', { query: q }, ok);
    }
  } finally {
    await srv.stop();
    rmSync(ws, { recursive: true, force: true });
    rmSync(rt, { recursive: true, force: true });
  }
  const md = Object.fromEntries(Object.entries(m).map(([k, v]) => [k, median(v)]));
  const ms = (x) => `${round(x, 2)} ms`;
  const rows = [
    {
      target: 'exec_command true in safe (a sandbox per command) vs spawnSync sh -c true',
      measured: round(md.exec / md.sh, 2),
      limit: 8,
      unit: '×',
      pass: md.exec / md.sh <= 8,
      note: `${ms(md.exec)} vs ${ms(md.sh)}; the sandbox is prepared ahead (docs/security-model.md); bwrap running true alone: ${ms(md.bwrap)}; the shared sandbox it replaced measured 2.2×`,
    },
    {
      target: 'git_status vs git status --porcelain in the same jail',
      measured: round(md.gitS / md.gitJ, 2),
      limit: 1.2,
      unit: '×',
      pass: md.gitS / md.gitJ <= 1.2,
      note: `${ms(md.gitS)} vs ${ms(md.gitJ)}; direct, unjailed: ${ms(md.git)} (${round(md.gitS / md.git, 2)}×); against the same jail this row does not show the jail's cost: see the direct rows below`,
    },
    {
      target: `search_text "${q}" (${matches} matches) vs rg -n in the same jail`,
      measured: round(md.search / md.rgJ, 2),
      limit: 1.2,
      unit: '×',
      pass: md.search / md.rgJ <= 1.2,
      note: `${ms(md.search)} vs ${ms(md.rgJ)}; direct, unjailed: ${ms(md.rg)} (${round(md.search / md.rg, 2)}×); against the same jail this row does not show the jail's cost: see the direct rows below`,
    },
    ...(await directFloorRows({ rg, samples: SAMPLES, batch: BATCH })),
  ];
  writeResults(
    'confinement',
    'Confinement costs: a sandbox per command, git and ripgrep jailed',
    rows,
    {
      medians_ms: Object.fromEntries(Object.entries(md).map(([k, v]) => [k, round(v, 3)])),
      samples: SAMPLES,
    },
    [
      `${SAMPLES} samples of each, in batches of ${BATCH}, on ${cpus().length} CPUs shared with other work ` +
        `(load average ${load.toFixed(1)} at the start): ratios and differences within this run are what count.`,
    ],
  );
}

await main();
