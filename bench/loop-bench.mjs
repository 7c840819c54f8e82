// `npm run bench:loop`: the whole coding loop a model runs to fix a bug, against its floors, in one run.
// On the dogfood JS project (bench/dogfood/fixtures.mjs: a few files, `test/math.test.js` failing on `add`),
// each run on a fresh copy of it:
//   - this server, started fresh (the built bin over HTTP, `--mode`, safe by default), asked tools/list as a
//     client does, then exec_command `node test/math.test.js` as the first command after start, search_text
//     "function add", read_file, apply_patch, exec_command again, git_diff (bench/loop-steps.mjs);
//   - the direct floor: the same six steps done on the host (node spawned, rg, a file read, a file write, node,
//     git diff), timed the same way (wall time per step from the caller's side, per loop the sum);
//   - the Python reference server (coding-tools-mcp 0.3) over stdio, when installed: `--python-ref "<command
//     line>"` ({workspace} is replaced by the project's path, which is also its working directory), else the
//     `coding-tools-mcp` command on PATH; when neither exists its rows say so.
// The three take turns within a run, in a rotating order, so machine load falls on all alike. Then, per mode,
// exec_command `true` with --gap-ms (20) between calls: p50 and p90 (target p90 ≤ 2× p50).
// Results: bench/results/loop.{json,md}.
// Usage: npm run bench:loop [-- --runs 6 --mode safe --settle 0 --latency-samples 60 --latency-modes safe,trusted,dangerous
//   --gap-ms 20 --python-ref "coding-tools-mcp"]
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { makeJsProject } from './dogfood/fixtures.mjs';
import { directLoop, STEPS, stdioServer, toolLoop } from './loop-steps.mjs';
import { loopRows, latencyRow } from './loop-report.mjs';
import {
  ensureBuilt,
  httpToolClient,
  REPO,
  startServer,
  toolsListOnce,
  whenWarm,
  writeResults,
} from './lib.mjs';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '6' },
    mode: { type: 'string', default: 'safe' },
    'python-ref': { type: 'string' },
    'latency-samples': { type: 'string', default: '60' },
    'latency-modes': { type: 'string', default: 'safe,trusted,dangerous' },
    'gap-ms': { type: 'string', default: '20' },
    // When the first call comes: `warm` (the default) once the server has said its warm-up is done (the helper
    // and rehearsal of the first command, git's and ripgrep's jails prepared: what a client that connects after
    // the start meets), or a pause in ms after tools/list (0: at once, the hardest case for the first command).
    settle: { type: 'string', default: 'warm' },
  },
});
const RUNS = Number(values.runs);
const GAP_MS = Number(values['gap-ms']);
const WARM = values.settle === 'warm';
const SETTLE_MS = WARM ? 0 : Number(values.settle);
/** Per run of this server, ms from its ready line to its `warm-up done` line (with --settle warm). */
const warmups = [];
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** The Python reference server's command line: --python-ref, else coding-tools-mcp on PATH, else undefined. */
function pythonRef() {
  if (values['python-ref']) return values['python-ref'];
  const r = spawnSync('sh', ['-c', 'command -v coding-tools-mcp'], { encoding: 'utf8' });
  return r.status === 0 && r.stdout.trim() ? 'coding-tools-mcp' : undefined;
}

/** One loop on this server: started fresh on `dir`, tools/list, then the six calls; resolves their times. */
async function ourLoop(dir, env) {
  // At the default level (info), which prints `warm-up done` and no line per request.
  const srv = await startServer(dir, WARM ? { ...env, SERVICE_LOG_LEVEL: 'info' } : env);
  const client = httpToolClient(srv.url, srv.token);
  try {
    if (WARM) warmups.push(await whenWarm(srv));
    // On the connection the calls then use, as a client keeps the one it listed the tools on.
    await toolsListOnce(srv, client.agent);
    if (SETTLE_MS > 0) await sleep(SETTLE_MS);
    return await toolLoop(client.callTool);
  } finally {
    client.close();
    await srv.stop();
  }
}

async function refLoop(commandLine, dir) {
  const ref = await stdioServer(commandLine, dir);
  try {
    if (SETTLE_MS > 0) await sleep(SETTLE_MS);
    return await toolLoop(ref.call);
  } finally {
    await ref.close();
  }
}

/** RUNS runs of every side, each on its own fresh copy of the project; resolves {ours, direct, ref} lists. */
async function loops(root, rgPath, ref) {
  const sides = {
    ours: (dir) => ourLoop(dir, { SERVICE_PERMISSION_MODE: values.mode }),
    direct: (dir) => directLoop(dir, rgPath),
    ...(ref ? { ref: (dir) => refLoop(ref, dir) } : {}),
  };
  const names = Object.keys(sides);
  const out = Object.fromEntries(names.map((n) => [n, []]));
  for (let i = 0; i < RUNS; i++) {
    // A rotating order: each side goes first, second and last equally often.
    for (let k = 0; k < names.length; k++) {
      const name = names[(i + k) % names.length];
      const dir = makeJsProject(path.join(root, `${name}-${i}`));
      out[name].push(await sides[name](dir));
    }
    process.stderr.write(`loop run ${i + 1}/${RUNS} done\n`);
  }
  return out;
}

/** exec_command `true` in `mode` on a fresh server, GAP_MS between calls; resolves the times and the sandbox. */
async function latency(root, mode, samples) {
  const dir = makeJsProject(path.join(root, `latency-${mode}`));
  const srv = await startServer(dir, { SERVICE_PERMISSION_MODE: mode });
  const client = httpToolClient(srv.url, srv.token);
  const ms = [];
  try {
    const env = (await client.callTool('check_exec_environment', {})).structuredContent;
    for (let i = 0; i < 5 + samples; i++) {
      await sleep(GAP_MS);
      const t0 = performance.now();
      const r = await client.callTool('exec_command', { cmd: 'true' });
      if (i >= 5) ms.push(performance.now() - t0);
      if (r.structuredContent?.status !== 'exited') throw new Error(`exec failed: ${JSON.stringify(r)}`);
    }
    return { mode, ms, sandbox: env?.sandbox?.in_use ?? 'none' };
  } finally {
    client.close();
    await srv.stop();
  }
}

async function main() {
  ensureBuilt();
  // The build's own writes (`npm run bench:loop` builds first) reach the disk now, not during the loops: their
  // writeback slowed the calls that touch the file system (git_diff 7–9 ms against 4–5 ms without it).
  spawnSync('sync');
  const engines = await import(path.join(REPO, 'dist/workspace/search/engines.js'));
  const ref = pythonRef();
  const root = mkdtempSync(path.join(tmpdir(), 'wb-loop-'));
  const load = loadavg()[0];
  try {
    const times = await loops(root, engines.findRipgrep(process.env).path, ref);
    const samples = Number(values['latency-samples']);
    const lat = [];
    if (samples > 0)
      for (const mode of values['latency-modes'].split(',').filter(Boolean))
        lat.push(await latency(root, mode, samples));
    const rows = [...loopRows(times, { mode: values.mode, ref }), ...lat.map((l) => latencyRow(l, GAP_MS))];
    const notes = [
      `${RUNS} runs, each on a fresh copy of the project and (for the servers) a fresh server; this server over ` +
        `HTTP in \`${values.mode}\`, asked tools/list first as a client does, then the six calls ` +
        `${WARM ? `once the server said its warm-up was done (${warmups.join(', ')} ms after its ready line; the server listens from the ready line on)` : SETTLE_MS ? `${SETTLE_MS} ms later` : 'at once'}; ` +
        `the sides take turns in a rotating order. Times are wall time per call from the client's side; ` +
        `a loop is the sum of its six. Medians over runs, min–max beside them.`,
      ref
        ? `Python reference server: \`${ref}\` over stdio.`
        : 'Python reference server (coding-tools-mcp 0.3): not installed here (no `coding-tools-mcp` on PATH, ' +
          'no `--python-ref`; PyPI was not reachable), so the loop is compared with the direct floor alone.',
      `Measured on ${cpus().length} CPUs shared with other work (load average ${load.toFixed(1)} at the ` +
        `start): ratios within this run are what count.`,
    ];
    writeResults(
      'loop',
      'The coding loop: this server against the same steps done directly',
      rows,
      {
        mode: values.mode,
        runs: RUNS,
        python_reference: ref ?? null,
        settle: WARM ? 'warm' : SETTLE_MS,
        warm_up_ms: warmups,
        load_average_at_start: load,
        steps: STEPS.map(([k]) => k),
        loops_ms: times,
        latency_ms: lat,
      },
      notes,
    );
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

await main();
