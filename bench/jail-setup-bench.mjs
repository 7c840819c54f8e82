// What the jails and sandboxes cost a call (docs/security-model.md#tool-jails-prepared-ahead, docs/benchmarks.md):
// git_status, git_diff and git_log on a small repository against the same git run directly on the host (Node's
// spawn, to its close), search_text against rg run directly; the first exec_command after start against the
// second; exec_command `true` p50 and p90 with 20 ms between calls in safe, trusted and dangerous. Calls over
// HTTP (one keep-alive connection); direct runs and tool calls interleaved, 20 ms apart, so both see the same
// machine. After them, the same client's round trip to a bare node:http server in its own process (a fixed
// JSON-RPC result, no work): the part of each difference that is HTTP itself, reported. Writes bench/results/jail-setup.{json,md}. Plain Node, no dependencies.
// Usage: npm run build && node bench/jail-setup-bench.mjs [--runs 40]
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { ensureBuilt, httpToolClient, REPO, round, startServer, whenWarm, writeResults } from './lib.mjs';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '40' } } });
const RUNS = Number(values.runs);
const GAP_MS = 20;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const q = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))];
};

/** A small repository: 30 files, one commit, two files changed. */
function smallRepo() {
  const dir = mkdtempSync(path.join(tmpdir(), 'wb-jail-bench-'));
  const g = (...a) => execFileSync('git', ['-c', 'user.name=b', '-c', 'user.email=b@b', ...a], { cwd: dir });
  g('init', '-q', '-b', 'main');
  mkdirSync(path.join(dir, 'src'));
  for (let i = 0; i < 30; i++)
    writeFileSync(path.join(dir, 'src', `m${i}.js`), `export function add${i}(a, b) {\n  return a + b;\n}\n`);
  g('add', '-A');
  g('commit', '-q', '-m', 'first');
  writeFileSync(path.join(dir, 'src', 'm1.js'), 'export function add1(a, b) {\n  return a + b + 0;\n}\n');
  writeFileSync(path.join(dir, 'src', 'm2.js'), 'export function add2(a, b) {\n  return b + a;\n}\n');
  return dir;
}

/** The ripgrep the server uses (the bundled one, else rg on PATH). */
function rgPath() {
  const bundled = path.join(REPO, 'node_modules/@vscode/ripgrep-linux-x64/bin/rg');
  return existsSync(bundled) ? bundled : 'rg';
}

/** A program run directly from this process (spawn to close), in ms. */
function direct(file, args, cwd) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const c = spawn(file, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    c.stdout.resume();
    c.stderr.resume();
    c.on('error', reject);
    c.on('close', () => resolve(performance.now() - t0));
  });
}

/** A bare node:http server in its own process answering every POST with a small JSON-RPC result. */
async function bareHttp() {
  const script =
    "const h=require('node:http');const b=JSON.stringify({jsonrpc:'2.0',id:1,result:{content:[{type:'text',text:'x'.repeat(200)}]}});" +
    "const s=h.createServer((q,r)=>{q.resume();q.on('end',()=>{r.writeHead(200,{'content-type':'application/json'});r.end(b)})});" +
    "s.listen(0,'127.0.0.1',()=>console.log(s.address().port))";
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise((resolve, reject) => {
    child.stdout.once('data', (d) => resolve(Number(String(d).trim())));
    child.once('exit', () => reject(new Error('the bare HTTP server did not start')));
  });
  const { callTool, close } = httpToolClient(`http://127.0.0.1:${port}/mcp`, 'none');
  return { callTool, stop: () => (close(), child.kill()) };
}

async function timed(call, name, args) {
  const t0 = performance.now();
  const r = await call(name, args);
  const ms = performance.now() - t0;
  if (r.isError) throw new Error(`${name} failed: ${JSON.stringify(r.content)}`);
  return ms;
}

/** Tool calls against their direct floor, interleaved; medians. */
async function floors(ws) {
  const srv = await startServer(ws, { SERVICE_PERMISSION_MODE: 'safe' });
  const { callTool, close } = httpToolClient(srv.url, srv.token);
  const bare = await bareHttp();
  const h = [];
  const pairs = [
    // The floors run the subcommand the tool runs (without its -c hardening); git_diff runs two at once.
    [
      'git_status',
      {},
      'git',
      [
        'status',
        '--porcelain=v2',
        '-z',
        '--branch',
        '--renames',
        '--ignore-submodules=dirty',
        '--untracked-files=normal',
      ],
    ],
    ['git_diff', {}, 'git', ['diff', '--patch', '--no-color']],
    ['git_log', { max_count: 20 }, 'git', ['log', '-n', '20', '--format=%H%x00%an%x00%s']],
    ['search_text', { query: 'function add1' }, rgPath(), ['--json', 'function add1', './']],
  ];
  const rows = [];
  try {
    for (const [tool, args, file, argv] of pairs) {
      for (let i = 0; i < 5; i++) await timed(callTool, tool, args); // warm-up
      const t = [];
      const d = [];
      for (let i = 0; i < RUNS; i++) {
        await sleep(GAP_MS);
        t.push(await timed(callTool, tool, args));
        await sleep(GAP_MS);
        d.push(await direct(file, argv, ws));
      }
      const tm = q(t, 0.5);
      const dm = q(d, 0.5);
      rows.push({
        target: `${tool} vs ${path.basename(file)} run directly (p50 of ${RUNS}, ${GAP_MS} ms apart)`,
        measured: round(tm - dm, 2),
        limit: 3,
        unit: 'ms',
        pass: tm - dm <= 3,
        note: `${round(tm, 2)} vs ${round(dm, 2)} ms`,
      });
    }
    // After the pairs, not between them: a third call in each round would leave the server idle longer.
    for (let i = 0; i < RUNS; i++) {
      await sleep(GAP_MS);
      h.push(await timed(bare.callTool, 'git_status', {}));
    }
    rows.push({
      target: `a bare node:http server's round trip, same client (p50 of ${h.length}, ${GAP_MS} ms apart)`,
      measured: round(q(h, 0.5), 2),
      unit: 'ms',
      op: '',
      limit: '–',
      result: 'reported',
      note: 'the part of each difference above that is HTTP itself (loopback, both processes waking)',
    });
  } finally {
    bare.stop();
    close();
    await srv.stop();
  }
  return rows;
}

/**
 * First exec_command after start vs the second, on fresh servers: a second after its `warm-up done` line, on a
 * new connection (its first request, so the connection's own cost is in the first call), then 20 ms later.
 */
async function firstCommand(ws, servers = 9) {
  const ratios = [];
  const pairs = [];
  for (let i = 0; i < servers; i++) {
    const srv = await startServer(ws, { SERVICE_PERMISSION_MODE: 'safe', SERVICE_LOG_LEVEL: 'info' });
    const { callTool, close } = httpToolClient(srv.url, srv.token);
    try {
      await whenWarm(srv);
      await sleep(1000);
      const a = await timed(callTool, 'exec_command', { cmd: 'true' });
      await sleep(GAP_MS);
      const b = await timed(callTool, 'exec_command', { cmd: 'true' });
      ratios.push(a / b);
      pairs.push(`${round(a, 1)}/${round(b, 1)}`);
    } finally {
      close();
      await srv.stop();
    }
  }
  const r = q(ratios, 0.5);
  return {
    target: `first exec_command true after start vs the second (median of ${servers} servers)`,
    measured: round(r, 2),
    limit: 1.3,
    unit: '×',
    pass: r <= 1.3,
    note: `first/second ms: ${pairs.join(', ')}`,
  };
}

/** exec_command true, 20 ms between calls: p90 against p50, per mode. */
async function spread(ws, mode) {
  const srv = await startServer(ws, { SERVICE_PERMISSION_MODE: mode });
  const { callTool, close } = httpToolClient(srv.url, srv.token);
  const t = [];
  try {
    for (let i = 0; i < 5; i++) await timed(callTool, 'exec_command', { cmd: 'true' });
    for (let i = 0; i < RUNS * 2; i++) {
      await sleep(GAP_MS);
      t.push(await timed(callTool, 'exec_command', { cmd: 'true' }));
    }
  } finally {
    close();
    await srv.stop();
  }
  const p50 = q(t, 0.5);
  const p90 = q(t, 0.9);
  return {
    target: `exec_command true p90 vs p50 in ${mode} (${RUNS * 2} calls, ${GAP_MS} ms apart)`,
    measured: round(p90 / p50, 2),
    limit: 2,
    unit: '×',
    pass: p90 / p50 <= 2,
    note: `p50 ${round(p50, 2)} ms, p90 ${round(p90, 2)} ms`,
  };
}

ensureBuilt();
const ws = smallRepo();
const load = loadavg()[0];
try {
  const rows = [...(await floors(ws)), await firstCommand(ws)];
  for (const mode of ['safe', 'trusted', 'dangerous']) rows.push(await spread(ws, mode));
  writeResults('jail-setup', 'Jails prepared ahead: tool calls against the programs run directly', rows, {
    load_at_start: round(load, 2),
    load_at_end: round(loadavg()[0], 2),
    note: 'a machine shared with other work: ratios and differences come from one run, interleaved',
  });
} finally {
  rmSync(ws, { recursive: true, force: true });
}
