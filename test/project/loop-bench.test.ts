// `npm run bench:loop` (bench/loop-bench.mjs, docs/benchmarks.md#the-coding-loop-and-the-direct-floors) runs
// end to end on the built bin: every call of the loop reported beside its direct step, the whole loop against
// the direct floor, the first command against the second, the p90/p50 row per mode, and the Python reference
// server's row either measured through the stdio client (here this server over stdio stands in for it) or
// saying it is not installed, never a figure made up. No timing is asserted: the machine is shared.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, REPO_ROOT } from '../helpers/server.js';

interface Row {
  target: string;
  measured: number | string | null;
  result?: string;
  pass?: boolean;
  note?: string;
}

/** Runs the bench with `args` into a temporary results directory; resolves its JSON and markdown. */
async function runBench(args: string[]) {
  const out = mkdtempSync(path.join(tmpdir(), 'wb-loop-results-'));
  try {
    const child = spawn(process.execPath, ['bench/loop-bench.mjs', ...args], {
      cwd: REPO_ROOT,
      env: { ...process.env, WB_BENCH_RESULTS: out },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let log = '';
    child.stdout.on('data', (c) => (log += c));
    child.stderr.on('data', (c) => (log += c));
    const code = await new Promise<number | null>((r) => child.on('exit', r));
    expect(code, log).toBe(0);
    return {
      json: JSON.parse(readFileSync(path.join(out, 'loop.json'), 'utf8')),
      md: readFileSync(path.join(out, 'loop.md'), 'utf8'),
    };
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

const STEPS = ['exec_first', 'search', 'read', 'patch', 'exec_second', 'diff'];
const installed = spawnSync('sh', ['-c', 'command -v coding-tools-mcp']).status === 0;
const byTarget = (rows: Row[], start: string) => rows.filter((r) => r.target.startsWith(start));

describe('npm run bench:loop', () => {
  it('is a package script, and npm run bench runs it', () => {
    const pkg = JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8'));
    expect(pkg.scripts['bench:loop']).toContain('node bench/loop-bench.mjs');
    expect(readFileSync(path.join(REPO_ROOT, 'bench/run-all.mjs'), 'utf8')).toContain(
      "'bench/loop-bench.mjs'",
    );
  });

  it.skipIf(installed)(
    'reports each call beside its direct step, and says the Python reference server is not installed',
    async () => {
      const { json, md } = await runBench(
        ['--runs', '2', '--mode', 'dangerous', '--latency-modes', 'dangerous'].concat([
          '--latency-samples',
          '3',
          '--gap-ms',
          '1',
        ]),
      );
      const rows: Row[] = json.targets;
      for (const side of ['ours', 'direct']) {
        expect(json.loops_ms[side]).toHaveLength(2);
        for (const loop of json.loops_ms[side]) for (const s of STEPS) expect(loop[s]).toBeGreaterThan(0);
      }
      expect(json.loops_ms.ref).toBeUndefined();
      const calls = rows.filter((r) => r.result === 'reported');
      expect(calls).toHaveLength(6);
      for (const r of calls) expect(r.note).toMatch(/; direct \(.+\) \d/);
      expect(byTarget(rows, 'whole loop (dangerous) vs the same six steps')[0]?.measured).toBeGreaterThan(0);
      const ref = byTarget(rows, 'whole loop (dangerous) vs the Python reference server');
      expect(ref).toEqual([expect.objectContaining({ measured: null, result: 'not installed' })]);
      expect(md).toContain('| not installed |');
      expect(md).toMatch(/Python reference server \(coding-tools-mcp 0\.3\): not installed here/);
      expect(byTarget(rows, 'first exec_command after start vs the second')[0]?.measured).toBeGreaterThan(0);
      const lat = byTarget(rows, 'exec_command `true` p90 vs p50 in dangerous, 1 ms between calls');
      expect(lat).toHaveLength(1);
      expect(lat[0]?.note).toMatch(/, 3 calls; sandbox: /);
    },
    300_000,
  );

  it('measures a reference server through its stdio client when one is given', async () => {
    const ref = `${process.execPath} ${BIN} --stdio --permission-mode dangerous --workspace {workspace}`;
    const { json, md } = await runBench([
      '--runs',
      '1',
      '--mode',
      'dangerous',
      '--latency-samples',
      '0',
      '--python-ref',
      ref,
    ]);
    expect(json.python_reference).toBe(ref);
    expect(json.loops_ms.ref).toHaveLength(1);
    for (const s of STEPS) expect(json.loops_ms.ref[0][s]).toBeGreaterThan(0);
    const row = byTarget(json.targets, 'whole loop (dangerous) vs the Python reference server')[0];
    expect(row?.measured).toBeGreaterThan(0);
    expect(row?.result).toBeUndefined();
    expect(md).not.toContain('not installed');
  }, 300_000);
});
