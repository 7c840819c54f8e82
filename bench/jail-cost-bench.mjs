// What building git's and ripgrep's jail costs, part by part (docs/benchmarks.md#jails-prepared-ahead): the
// jail the server builds (src/process/jail/jail.ts `wrap`, bubblewrap) running `/bin/true`, against the same
// jail without its network namespace, without the seccomp filter, with /etc as one read-only view copied once
// instead of one bind per file, and with /dev holding only null and urandom instead of bubblewrap's `--dev`;
// and `/bin/true` run directly. Measured as CPU time of the jail's processes (bash's `times` over N runs in a
// row: user + system of the children), which a busy machine disturbs far less than wall time; rounds rotate
// the variants. The kernel's deferred work (a network namespace is torn down by a kernel worker) is not in it.
// Writes bench/results/jail-cost.{json,md}. Usage: npm run build && node bench/jail-cost-bench.mjs [--runs 40]
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { ensureBuilt, REPO, round, writeResults } from './lib.mjs';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '40' } } });
const RUNS = Number(values.runs);
const ROUNDS = 3;
/** The files of /etc the jail binds one by one (jail.ts ETC_FILES). */
const ETC = [];

/** The jail's argv for `/bin/true` in `ws`, as the server builds it (bubblewrap). */
async function jailArgv(ws) {
  const { ToolJail, ETC_FILES } = await import(path.join(REPO, 'dist/process/jail/jail.js'));
  ETC.push(...ETC_FILES);
  const { createRuntimeDirs } = await import(path.join(REPO, 'dist/process/runtime-dir.js'));
  const dirs = createRuntimeDirs({ configured: undefined, xdgRuntimeDir: undefined }, ws);
  const jail = new ToolJail({
    requested: 'bwrap',
    pathVar: process.env.PATH,
    workspaceReal: ws,
    dirs,
    privateFiles: [],
    sealed: [],
    readAllow: [],
  });
  const j = jail.wrap('/bin/true', [], ws);
  if (!j.args.includes('--')) throw new Error(`no bubblewrap jail here: ${jail.status().reason}`);
  return { file: j.file, args: j.args, seccomp: j.seccomp, root: dirs.root };
}

function variants(j) {
  const a = j.args;
  const view = path.join(j.root, 'bench-etc');
  mkdirSync(view, { recursive: true });
  for (const f of ETC) {
    try {
      cpSync(f, path.join(view, path.basename(f)), { recursive: true, verbatimSymlinks: true });
    } catch {
      /* absent here, as --ro-bind-try allows */
    }
  }
  const etcOne = [];
  for (let i = 0; i < a.length; i++) {
    if (a[i] === '--ro-bind-try' && ETC.includes(a[i + 1])) i += 2;
    else if (a[i] === '--dir' && a[i + 1] === '/etc') {
      etcOne.push('--ro-bind', view, '/etc');
      i++;
    } else etcOne.push(a[i]);
  }
  const replace = (xs, at, n, ...by) => {
    const out = [...xs];
    const i = out.indexOf(at);
    if (i < 0) throw new Error(`the jail has no ${at}`);
    out.splice(i, n, ...by);
    return out;
  };
  const devMin = [
    '--dir',
    '/dev',
    '--dev-bind',
    '/dev/null',
    '/dev/null',
    '--dev-bind',
    '/dev/urandom',
    '/dev/urandom',
  ];
  const noNet = [
    '--unshare-user-try',
    '--unshare-ipc',
    '--unshare-pid',
    '--unshare-uts',
    '--unshare-cgroup-try',
  ];
  return {
    'the jail as built': { args: a },
    'without its network namespace': { args: replace(a, '--unshare-all', 1, ...noNet) },
    'without the seccomp filter': { args: replace(a, '--seccomp', 2), noFilter: true },
    '/etc as one view (1 bind instead of 8)': { args: etcOne },
    '/dev with null and urandom only': { args: replace(a, '--dev', 2, ...devMin) },
    'both mount cuts': { args: replace(etcOne, '--dev', 2, ...devMin) },
    '`/bin/true` directly': { direct: true },
  };
}

const q = (s) => `'${String(s).replace(/'/g, `'\\''`)}'`;

/** CPU milliseconds per run of `v`, over RUNS runs in a row. */
function cpuPerRun(j, v, cwd) {
  const one = v.direct
    ? '/bin/true'
    : `${q(j.file)} ${v.args.map(q).join(' ')}${v.noFilter || !j.seccomp ? '' : ` 3<${q(j.seccomp)}`}`;
  const cmd = `for i in $(seq ${RUNS}); do ${one} || exit 9; done; times`;
  const r = spawnSync('bash', ['-c', cmd], { cwd, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${one}: exit ${r.status}: ${r.stderr}`);
  const m = /(\d+)m([\d.]+)s (\d+)m([\d.]+)s/.exec(r.stdout.trim().split('\n')[1] ?? '');
  if (!m) throw new Error(`no times in ${r.stdout}`);
  return ((+m[1] * 60 + +m[2] + +m[3] * 60 + +m[4]) / RUNS) * 1000;
}

ensureBuilt();
const ws = mkdtempSync(path.join(tmpdir(), 'wb-jail-cost-'));
const load = loadavg()[0];
try {
  const j = await jailArgv(ws);
  const vs = variants(j);
  const per = Object.fromEntries(Object.keys(vs).map((k) => [k, []]));
  for (let r = 0; r < ROUNDS; r++) {
    const names = Object.keys(vs);
    const order = [...names.slice(r % names.length), ...names.slice(0, r % names.length)];
    for (const k of order) per[k].push(cpuPerRun(j, vs[k], ws));
  }
  const med = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const full = med(per['the jail as built']);
  const rows = Object.entries(per).map(([k, xs]) => ({
    target: `CPU per run: ${k}`,
    measured: round(med(xs), 2),
    unit: 'ms',
    op: '',
    limit: '–',
    result: 'reported',
    note: `${round(med(xs) - full, 2)} ms against the jail as built; rounds ${xs.map((x) => round(x, 2)).join(', ')}`,
  }));
  const mounts = j.args.filter((x) =>
    /^--(ro-bind|ro-bind-try|bind|dev-bind|proc|dev|tmpfs|symlink|dir)$/.test(x),
  );
  writeResults(
    'jail-cost',
    "What building git's and ripgrep's jail costs, part by part",
    rows,
    {
      runs_per_round: RUNS,
      rounds: ROUNDS,
      mount_options: mounts.length,
      load_at_start: round(load, 2),
      load_at_end: round(loadavg()[0], 2),
    },
    [
      `${RUNS} runs in a row per variant and round, ${ROUNDS} rounds in rotating order; CPU time (user + system) of the jail's processes, from bash's \`times\`; the median of the rounds. The jail as built has ${mounts.length} mount options.`,
      `Load average ${round(load, 1)} at the start on ${cpus().length} CPUs.`,
    ],
  );
} finally {
  rmSync(ws, { recursive: true, force: true });
}
