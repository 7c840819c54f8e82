// "Every sandboxed command near the spawn floor": exec_command `true` over HTTP (keep-alive, bearer,
// handshake-era tools/call) in `safe` with bubblewrap and in `dangerous` without a sandbox, against the floor
// Node's spawnSync('sh', ['-c', 'true']) taken in the same process, in alternating batches so machine load
// falls on all three alike; and how 8 concurrent clients scale over 1 in `safe`.
// Targets: safe ≤ 1.5× the floor, dangerous ≤ 1.2×, 8 clients ≥ 1.6× the throughput of 1.
// Usage: npm run build && node bench/exec-speed-bench.mjs [--samples 300] [--batch 20] [--calls 200]
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { ensureBuilt, execTrue, httpToolCaller, round, startServer, writeResults } from './lib.mjs';

const { values } = parseArgs({
  options: {
    samples: { type: 'string', default: '300' },
    batch: { type: 'string', default: '20' },
    calls: { type: 'string', default: '200' },
    out: { type: 'string', default: 'exec-speed' },
  },
});
const SAMPLES = Number(values.samples);
const BATCH = Number(values.batch);
const CALLS = Number(values.calls);
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor(s.length / 2)] : NaN;
};

function floor(n, out, shell = 'sh') {
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    spawnSync(shell, ['-c', 'true']);
    out.push(performance.now() - t0);
  }
}

/** A tool call that starts nothing: what HTTP, JSON-RPC and the dispatcher cost by themselves. */
async function noSpawn(call, n, out) {
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await call('server_info', {});
    out.push(performance.now() - t0);
  }
}

/** Calls per second of `clients` callers, each running `calls` exec_command true one after another. */
async function throughput(srv, clients) {
  const callers = Array.from({ length: clients }, () => httpToolCaller(srv.url, srv.token));
  await Promise.all(callers.map((c) => execTrue(c, 2)));
  const t0 = performance.now();
  await Promise.all(callers.map((c) => execTrue(c, CALLS)));
  return (clients * CALLS) / ((performance.now() - t0) / 1000);
}

export async function measureExecSpeed() {
  ensureBuilt();
  const wsS = mkdtempSync(path.join(tmpdir(), 'wb-speed-s-'));
  const wsD = mkdtempSync(path.join(tmpdir(), 'wb-speed-d-'));
  const safe = await startServer(wsS, { SERVICE_PERMISSION_MODE: 'safe' });
  const dangerous = await startServer(wsD, { SERVICE_PERMISSION_MODE: 'dangerous' });
  try {
    const info = await httpToolCaller(safe.url, safe.token)('check_exec_environment', {});
    const sandbox = info.structuredContent?.sandbox?.in_use ?? 'none';
    const callS = httpToolCaller(safe.url, safe.token);
    const callD = httpToolCaller(dangerous.url, dangerous.token);
    await execTrue(callS, 20);
    await execTrue(callD, 20);
    const s = [];
    const d = [];
    const f = [];
    const b = [];
    const c = [];
    while (s.length < SAMPLES) {
      await execTrue(callS, BATCH, s);
      await execTrue(callD, BATCH, d);
      floor(BATCH, f);
      floor(BATCH, b, 'bash');
      await noSpawn(callD, BATCH, c);
    }
    const one = await throughput(safe, 1);
    const eight = await throughput(safe, 8);
    return {
      sandbox,
      safe: median(s),
      dangerous: median(d),
      floor: median(f),
      bash: median(b),
      call: median(c),
      n: s.length,
      one,
      eight,
    };
  } finally {
    await safe.stop();
    await dangerous.stop();
    rmSync(wsS, { recursive: true, force: true });
    rmSync(wsD, { recursive: true, force: true });
  }
}

export function execSpeedRows(m) {
  const rs = m.safe / m.floor;
  const rd = m.dangerous / m.floor;
  const scale = m.eight / m.one;
  const fl = `spawnSync sh -c true ${round(m.floor, 2)} ms`;
  return [
    {
      target: `exec_command true over HTTP, safe (sandbox: ${m.sandbox}) vs the floor`,
      measured: round(rs, 2),
      limit: 1.5,
      unit: '×',
      pass: rs <= 1.5,
      note: `${round(m.safe, 2)} ms vs ${fl}; medians of ${m.n} alternating samples`,
    },
    {
      target: 'exec_command true over HTTP, dangerous vs the floor',
      measured: round(rd, 2),
      limit: 1.2,
      unit: '×',
      pass: rd <= 1.2,
      note: `${round(m.dangerous, 2)} ms vs ${fl}`,
    },
    {
      target: '8 concurrent clients vs 1, safe: throughput of exec_command true',
      measured: round(scale, 2),
      op: '≥',
      limit: 1.6,
      unit: '×',
      pass: scale >= 1.6,
      note: `${round(m.eight, 1)} vs ${round(m.one, 1)} calls/s, ${CALLS} calls per client`,
    },
    {
      target:
        'what bounds the ratios (context): bash -c true + a tool call that spawns nothing, vs the floor',
      measured: round((m.bash + m.call) / m.floor, 2),
      limit: '—',
      unit: '×',
      pass: true,
      note: `commands run in bash (docs/design-notes.md#bash-and-retention): spawnSync bash -c true ${round(m.bash, 2)} ms; server_info over HTTP ${round(m.call, 2)} ms`,
    },
  ];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  measureExecSpeed()
    .then((m) =>
      writeResults(values.out, 'Commands near the spawn floor, same run', execSpeedRows(m), {
        raw: m,
      }),
    )
    .catch((e) => {
      console.error(e);
      process.exit(1);
    });
}
