// `npm run bench`: every benchmark of the project in one run, one after another (never two at once: the
// machine has two cores), each writing its own bench/results/<name>.{json,md}; then
// bench/results/latest.{json,md} gathers them: the table of start-up and floors (start-up, first command and
// commands against their floors, measured in this run), every other benchmark's targets with the floors they
// were measured against, the Python server's reference figures, the soak's before/after table and the
// hostile-input suite's counts. Usage: npm run bench [-- --only startup,exec-speed] [--soak-seconds 60]
// [--skip-hostile]
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { ensureBuilt, REPO, RESULTS, resultWord } from './lib.mjs';

const { values } = parseArgs({
  options: {
    only: { type: 'string' },
    'soak-seconds': { type: 'string', default: '60' },
    'skip-hostile': { type: 'boolean', default: false },
  },
});

/** name → script and arguments; the order puts the quick, noise-sensitive ones first. */
const STEPS = [
  ['startup', 'bench/startup-bench.mjs', []],
  ['exec-speed', 'bench/exec-speed-bench.mjs', []],
  ['loop', 'bench/loop-bench.mjs', []],
  ['core', 'bench/core-bench.mjs', []],
  ['patch', 'bench/patch-bench.mjs', []],
  ['git', 'bench/git-bench.mjs', []],
  ['exec', 'bench/exec-bench.mjs', ['--duration', '20', '--commands', '500', '--warmup', '1000']],
  ['sandbox', 'bench/sandbox-bench.mjs', []],
  ['proxy', 'bench/proxy-bench.mjs', []],
  ['dogfood', 'bench/dogfood/dogfood-bench.mjs', []],
  ['pressure', 'bench/pressure-bench.mjs', []],
  ['soak', 'bench/soak.mjs', ['--seconds', values['soak-seconds']]],
];

function run(name, script, args) {
  if (!existsSync(path.join(REPO, script))) return { name, status: 'missing' };
  process.stdout.write(`\n=== ${name}: node ${script} ${args.join(' ')}\n`);
  const t0 = Date.now();
  const r = spawnSync(process.execPath, [script, ...args], { cwd: REPO, stdio: 'inherit' });
  return {
    name,
    status: r.status === 0 ? 'ok' : `exit ${r.status}`,
    seconds: Math.round((Date.now() - t0) / 1000),
  };
}

function results(name) {
  try {
    return JSON.parse(readFileSync(path.join(RESULTS, `${name}.json`), 'utf8'));
  } catch {
    return undefined;
  }
}

/** The hostile-input suite through vitest's JSON reporter: how many tests, how many passed. */
function hostile() {
  const dir = mkdtempSync(path.join(tmpdir(), 'wb-hostile-'));
  const out = path.join(dir, 'report.json');
  try {
    spawnSync('npx', ['vitest', 'run', 'test/hostile', '--reporter=json', `--outputFile=${out}`], {
      cwd: REPO,
      stdio: 'ignore',
    });
    const r = JSON.parse(readFileSync(out, 'utf8'));
    const tests = r.testResults.flatMap((f) => f.assertionResults);
    return {
      tests: tests.length,
      passed: tests.filter((t) => t.status === 'passed').length,
      titles: tests.map((t) => `${t.status}: ${t.title}`),
    };
  } catch (e) {
    return { error: String(e) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const fmt = (v) => (v === null || v === undefined ? 'n/a' : String(v));
const table = (rows) => [
  '| target | measured | limit | result | note |',
  '|---|---|---|---|---|',
  ...rows.map(
    (r) =>
      `| ${r.target} | ${fmt(r.measured)} ${r.unit ?? ''} | ${r.op ?? '≤'} ${r.limit} ${r.unit ?? ''} | ${resultWord(r)} | ${r.note ?? ''} |`,
  ),
];

function main() {
  ensureBuilt();
  const only = values.only ? new Set(values.only.split(',')) : undefined;
  const now = STEPS.filter(([n]) => !only || only.has(n)).map(([n, s, a]) => run(n, s, a));
  // With --only, the other steps keep the status of the run that last measured them.
  const before = results('latest')?.ran ?? [];
  const ran = STEPS.map(([n]) => now.find((r) => r.name === n) ?? before.find((r) => r.name === n)).filter(
    Boolean,
  );
  const hostileCounts = values['skip-hostile'] ? undefined : hostile();
  const all = Object.fromEntries(STEPS.map(([n]) => [n, results(n)]).filter(([, r]) => r));
  const date = new Date().toISOString();
  const md = [
    '# All benchmarks, one run',
    '',
    `Run ${date.slice(0, 16).replace('T', ' ')} UTC on Node ${process.version}, ${cpus().length} CPUs. Every ratio compares figures taken in the same script run; the steps below ran one after another.`,
    '',
    '| benchmark | status | seconds | measured |',
    '|---|---|---|---|',
    ...ran.map(
      (r) =>
        `| ${r.name} | ${r.status} | ${r.seconds ?? ''} | ${all[r.name]?.environment?.date?.slice(0, 16) ?? ''} |`,
    ),
    '',
  ];
  const issue14 = [...(all.startup?.targets ?? []), ...(all['exec-speed']?.targets ?? [])];
  if (issue14.length) md.push('## Start-up and commands against their floors', '', ...table(issue14), '');
  const ref = all.dogfood?.reference;
  if (ref)
    md.push(
      '## The Python server (coding-tools-mcp 0.3) as reference',
      '',
      '```json',
      JSON.stringify(ref, null, 2),
      '```',
      '',
    );
  if (all.soak) md.push(`## ${all.soak.title}`, '', ...table(all.soak.targets), '');
  if (hostileCounts) {
    md.push('## Hostile input (test/hostile)', '');
    if (hostileCounts.error) md.push(`Not run: ${hostileCounts.error}`, '');
    else
      md.push(
        `${hostileCounts.passed} of ${hostileCounts.tests} tests passed.`,
        '',
        ...hostileCounts.titles.map((t) => `- ${t}`),
        '',
      );
  }
  for (const [name, r] of Object.entries(all)) {
    if (name === 'soak' || name === 'startup' || name === 'exec-speed') continue;
    const rows = r.targets ?? r.goals;
    if (Array.isArray(rows)) md.push(`## ${r.title ?? name}`, '', ...table(rows), '');
  }
  writeFileSync(path.join(RESULTS, 'latest.md'), md.join('\n'));
  writeFileSync(
    path.join(RESULTS, 'latest.json'),
    JSON.stringify({ date, ran, hostile: hostileCounts, results: all }, null, 2) + '\n',
  );
  process.stdout.write('\n' + md.join('\n'));
  return ran.every((r) => r.status === 'ok' || r.status === 'missing');
}

process.exit(main() ? 0 : 1);
