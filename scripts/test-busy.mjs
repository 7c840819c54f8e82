// `npm run test:busy [-- --runs N] [--burners N] [vitest args…]`: the test suite on a busy machine.
// Starts CPU burners (`node -e 'for(;;);'`, two by default), runs `npm test` N times (default 3) beside them,
// prints each run's wall time and result, and stops the burners by PID at the end — also on failure and on
// Ctrl-C. Any other argument goes to vitest (e.g. a file filter for a quick check of this script).
import { spawn } from 'node:child_process';
import { loadavg } from 'node:os';

function parseArgs(argv) {
  const opts = { runs: 3, burners: 2, vitest: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const m = /^--(runs|burners)(?:=(.*))?$/.exec(a);
    if (!m) {
      opts.vitest.push(a);
      continue;
    }
    const raw = m[2] ?? argv[++i];
    const n = Number(raw);
    if (!Number.isInteger(n) || n < (m[1] === 'runs' ? 1 : 0)) {
      console.error(`test-busy: --${m[1]} needs a whole number (got ${JSON.stringify(raw)})`);
      process.exit(2);
    }
    opts[m[1]] = n;
  }
  return opts;
}

const opts = parseArgs(process.argv.slice(2));
const burners = [];
let current; // the running `npm test`, stopped with us on a signal

function stopBurners() {
  for (const b of burners.splice(0)) {
    try {
      process.kill(b.pid, 'SIGKILL');
    } catch {
      /* already gone */
    }
  }
}

process.on('exit', stopBurners);
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(sig, () => {
    stopBurners();
    if (current?.exitCode === null) current.kill(sig);
    console.error(`\ntest-busy: ${sig}, burners stopped`);
    process.exit(130);
  });
}

function runTests(args) {
  return new Promise((resolve) => {
    const child = spawn('npm', ['test', ...(args.length > 0 ? ['--', ...args] : [])], { stdio: 'inherit' });
    current = child;
    child.once('error', (e) => resolve({ code: null, error: e }));
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
}

const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

for (let i = 0; i < opts.burners; i++) {
  const b = spawn(process.execPath, ['-e', 'for(;;);'], { stdio: 'ignore' });
  burners.push(b);
  console.log(`test-busy: CPU burner ${i + 1} started, pid ${b.pid}`);
}
console.log(`test-busy: load average ${load()}; ${opts.runs} run(s) of npm test ${opts.vitest.join(' ')}`);

const results = [];
try {
  for (let run = 1; run <= opts.runs; run++) {
    const t0 = performance.now();
    const r = await runTests(opts.vitest);
    const seconds = (performance.now() - t0) / 1000;
    const ok = r.code === 0;
    results.push({ run, ok, seconds });
    console.log(
      `test-busy: run ${run}/${opts.runs} ${ok ? 'passed' : `FAILED (${r.error?.message ?? r.signal ?? `exit ${r.code}`})`} in ${seconds.toFixed(1)} s (load average ${load()})`,
    );
  }
} finally {
  stopBurners();
}

console.log(`\ntest-busy: ${opts.burners} CPU burner(s) beside each run; burners stopped`);
for (const r of results)
  console.log(`  run ${r.run}: ${r.ok ? 'passed' : 'FAILED'}  ${r.seconds.toFixed(1)} s`);
process.exitCode = results.every((r) => r.ok) ? 0 : 1;
