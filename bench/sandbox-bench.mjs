// Speed: the hardened sandbox must not make commands slower — `exec_command true` in `safe` with
// bubblewrap within 10 % of the build before it, measured in the same run. The baseline is built from a git
// revision into a temporary worktree (its node_modules linked to ours), both servers run side by side, and
// samples are taken in alternating batches so machine load falls on both alike. Floors for context: Node's
// `spawnSync('sh', ['-c', 'true'])` and bubblewrap itself running `true`.
// Usage: npm run build && node bench/sandbox-bench.mjs [--baseline 456169f] [--samples 300] [--batch 20]
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import {
  BWRAP_TRUE,
  ensureBuilt,
  execTrue,
  httpToolCaller as caller,
  REPO,
  round,
  startServer,
  writeResults,
} from './lib.mjs';

const { values } = parseArgs({
  options: {
    baseline: { type: 'string', default: '456169f' },
    samples: { type: 'string', default: '300' },
    batch: { type: 'string', default: '20' },
  },
});
const SAMPLES = Number(values.samples);
const BATCH = Number(values.batch);
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor(s.length / 2)] : NaN;
};

function git(cwd, ...args) {
  const r = spawnSync('git', args, { cwd, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
  return r.stdout.trim();
}

/** The baseline revision built in a temporary worktree; returns its bin and a cleanup. */
function buildBaseline(rev) {
  const dir = mkdtempSync(path.join(tmpdir(), 'wb-baseline-'));
  git(REPO, 'worktree', 'add', '--detach', dir, rev);
  symlinkSync(path.join(REPO, 'node_modules'), path.join(dir, 'node_modules'));
  const tsc = path.join(REPO, 'node_modules/.bin/tsc');
  const b = spawnSync(tsc, ['-p', 'tsconfig.build.json'], { cwd: dir, stdio: 'inherit' });
  if (b.status !== 0) throw new Error('baseline build failed');
  chmodSync(path.join(dir, 'dist/cli/main.js'), 0o755);
  return {
    bin: path.join(dir, 'dist/cli/main.js'),
    cleanup: () => {
      spawnSync('git', ['worktree', 'remove', '--force', dir], { cwd: REPO });
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function floors(n) {
  const sh = [];
  const bw = [];
  for (let i = 0; i < n; i++) {
    let t0 = performance.now();
    spawnSync('sh', ['-c', 'true']);
    sh.push(performance.now() - t0);
    t0 = performance.now();
    spawnSync('bwrap', BWRAP_TRUE);
    bw.push(performance.now() - t0);
  }
  return { sh: median(sh), bwrap: median(bw) };
}

async function main() {
  ensureBuilt();
  if (!existsSync('/usr/bin/bwrap') && spawnSync('bwrap', ['--version']).error)
    throw new Error('needs bubblewrap');
  const base = buildBaseline(values.baseline);
  const wsA = mkdtempSync(path.join(tmpdir(), 'wb-sbx-a-'));
  const wsB = mkdtempSync(path.join(tmpdir(), 'wb-sbx-b-'));
  const env = { SERVICE_SANDBOX: 'bwrap', SERVICE_PERMISSION_MODE: 'safe' };
  const now = await startServer(wsA, env);
  const old = await startServer(wsB, env, base.bin);
  try {
    const callNow = caller(now.url, now.token);
    const callOld = caller(old.url, old.token);
    await execTrue(callNow, 20, []);
    await execTrue(callOld, 20, []);
    const a = [];
    const b = [];
    while (a.length < SAMPLES) {
      await execTrue(callNow, BATCH, a);
      await execTrue(callOld, BATCH, b);
    }
    const f = floors(50);
    const ratio = median(a) / median(b);
    writeResults('sandbox', 'Hardened sandbox: exec_command `true` in safe (bubblewrap), same run', [
      {
        target: `exec_command true p50, hardened vs ${values.baseline} (before the hardening)`,
        measured: round(ratio, 3),
        limit: 1.1,
        unit: '×',
        pass: ratio <= 1.1,
        note: `${round(median(a), 2)} ms vs ${round(median(b), 2)} ms, ${a.length} samples each, alternating batches of ${BATCH}`,
      },
      {
        target: 'floors in the same run (context)',
        measured: round(f.sh, 2),
        limit: '—',
        unit: 'ms',
        pass: true,
        note: `spawnSync sh -c true ${round(f.sh, 2)} ms; bwrap … true ${round(f.bwrap, 2)} ms`,
      },
    ]);
  } finally {
    await now.stop();
    await old.stop();
    base.cleanup();
    rmSync(wsA, { recursive: true, force: true });
    rmSync(wsB, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
