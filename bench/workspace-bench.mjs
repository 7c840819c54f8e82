#!/usr/bin/env node
// Several workspaces (docs/tools.md#several-workspaces), on the ~8,000-file benchmark repository:
//  1. open_workspace {mode: "worktree"} (the tool call, wall clock, over HTTP) against `git worktree add -b` of
//     the same commit run directly, and against the clone it runs, `git clone --shared --no-checkout` then
//     `git checkout -b`, run directly: at most 1.5x either. Medians of --rounds, interleaved.
//  2. Server CPU (/proc/<pid>/schedstat) of read_file carrying `workspace` (a checkout of the same directory)
//     against the same call on the default workspace, in one server, alternating rounds: at most 1.05x.
// Results: bench/results/workspace.{json,md}.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import {
  benchWorkspace,
  cpuNs,
  ensureBuilt,
  httpToolClient,
  median,
  round,
  startServer,
  writeResults,
} from './lib.mjs';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '7' },
    calls: { type: 'string', default: '1500' },
    'cpu-rounds': { type: 'string', default: '8' },
  },
});
const ROUNDS = Number(values.rounds);
const CALLS = Number(values.calls);
const CPU_ROUNDS = Number(values['cpu-rounds']);
const G = ['-c', 'user.name=bench', '-c', 'user.email=bench@localhost'];
const git = (cwd, ...args) =>
  execFileSync('git', [...G, ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });

/** `git worktree add -b` of HEAD into a fresh directory, timed; removed afterwards (untimed). */
function worktreeAdd(repo, scratch, i) {
  const dir = path.join(scratch, `wt-${i}`);
  const t0 = performance.now();
  git(repo, 'worktree', 'add', '-q', '-b', `bench-wt-${i}`, dir, 'HEAD');
  const ms = performance.now() - t0;
  git(repo, 'worktree', 'remove', '--force', dir);
  git(repo, 'branch', '-q', '-D', `bench-wt-${i}`);
  return ms;
}

/** The clone open_workspace makes, run directly, timed; removed afterwards (untimed). */
function plainClone(repo, scratch, i) {
  const dir = path.join(scratch, `clone-${i}`);
  const t0 = performance.now();
  git(repo, 'clone', '-q', '--shared', '--no-checkout', '--', repo, dir);
  git(dir, 'checkout', '-q', '-b', `bench-clone-${i}`, 'HEAD');
  const ms = performance.now() - t0;
  rmSync(dir, { recursive: true, force: true });
  return ms;
}

async function openTimes(srv, repo) {
  const client = httpToolClient(srv.url, srv.token);
  const scratch = mkdtempSync(path.join(tmpdir(), 'wb-wsbench-git-'));
  const open = [];
  const add = [];
  const clone = [];
  try {
    for (let i = 0; i < ROUNDS; i++) {
      add.push(worktreeAdd(repo, scratch, i));
      clone.push(plainClone(repo, scratch, i));
      const t0 = performance.now();
      const r = await client.callTool('open_workspace', { path: path.basename(repo), mode: 'worktree' });
      open.push(performance.now() - t0);
      if (r.isError) throw new Error(`open_workspace: ${JSON.stringify(r.structuredContent)}`);
      const c = await client.callTool('close_workspace', {
        workspace: r.structuredContent.workspace,
        remove: true,
      });
      if (c.isError) throw new Error(`close_workspace: ${JSON.stringify(c.structuredContent)}`);
    }
  } finally {
    client.close();
    rmSync(scratch, { recursive: true, force: true });
  }
  return { open: median(open), add: median(add), clone: median(clone) };
}

/** Server CPU per read_file, µs, with and without `workspace`, alternating rounds. */
async function cpuPerCall(srv, repo) {
  const client = httpToolClient(srv.url, srv.token);
  try {
    const o = await client.callTool('open_workspace', { path: path.basename(repo) });
    const id = o.structuredContent.workspace;
    const args = {
      plain: { path: 'mcp-bench/small.js' },
      scoped: { path: 'mcp-bench/small.js', workspace: id },
    };
    const got = { plain: [], scoped: [] };
    for (let r = 0; r < CPU_ROUNDS + 1; r++) {
      for (const kind of r % 2 ? ['scoped', 'plain'] : ['plain', 'scoped']) {
        const before = cpuNs(srv.pid);
        for (let i = 0; i < CALLS; i++) {
          const res = await client.callTool('read_file', args[kind]);
          if (res.isError) throw new Error(`read_file: ${JSON.stringify(res.structuredContent)}`);
        }
        if (r > 0) got[kind].push((cpuNs(srv.pid) - before) / CALLS / 1000); // round 0 warms up
      }
    }
    return { plain: median(got.plain), scoped: median(got.scoped) };
  } finally {
    client.close();
  }
}

async function main() {
  ensureBuilt();
  const repo = benchWorkspace();
  const files = git(repo, 'ls-files').toString().split('\n').filter(Boolean).length;
  const state = mkdtempSync(path.join(tmpdir(), 'wb-wsbench-state-'));
  const env = {
    SERVICE_PROJECTS: path.dirname(repo),
    SERVICE_STATE_DIR: state,
    SERVICE_CONSOLE: '0',
  };
  const srv = await startServer(repo, env);
  try {
    const t = await openTimes(srv, repo);
    const cpu = await cpuPerCall(srv, repo);
    const rows = [
      {
        target: `open_workspace worktree vs git worktree add (${files} files)`,
        measured: round(t.open / t.add, 2),
        limit: 1.5,
        unit: 'x',
        pass: t.open / t.add <= 1.5,
        note: `medians of ${ROUNDS}: open ${round(t.open, 1)} ms, git worktree add ${round(t.add, 1)} ms`,
      },
      {
        target: 'open_workspace worktree vs the same clone run directly',
        measured: round(t.open / t.clone, 2),
        limit: 1.5,
        unit: 'x',
        pass: t.open / t.clone <= 1.5,
        note: `clone --shared --no-checkout + checkout -b: ${round(t.clone, 1)} ms`,
      },
      {
        target: 'server CPU of read_file with `workspace` vs the default workspace',
        measured: round(cpu.scoped / cpu.plain, 3),
        limit: 1.05,
        unit: 'x',
        pass: cpu.scoped / cpu.plain <= 1.05,
        note: `medians of ${CPU_ROUNDS} rounds of ${CALLS} calls: ${round(cpu.scoped, 1)} µs vs ${round(cpu.plain, 1)} µs`,
      },
    ];
    writeResults('workspace', 'Several workspaces', rows, { raw: { open: t, cpu } });
  } finally {
    await srv.stop();
    rmSync(state, { recursive: true, force: true });
  }
}

await main();
