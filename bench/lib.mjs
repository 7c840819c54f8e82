// Shared pieces of the project's benchmark scripts: the benchmark workspace, starting the built server,
// writing results (JSON + a markdown table, no absolute machine paths), and what several scripts measure with
// (the median, a process's CPU time, bubblewrap's smallest sandbox, headless Chromium).
import { spawn, spawnSync } from 'node:child_process';
import {
  closeSync,
  constants,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const BENCH_DIR = path.dirname(fileURLToPath(import.meta.url));
export const REPO = path.resolve(BENCH_DIR, '..');
// WB_BENCH_RESULTS lets a test run a benchmark without touching the committed results.
export const RESULTS = process.env.WB_BENCH_RESULTS || path.join(BENCH_DIR, 'results');

/** The ~9 k-file benchmark repository, built once from npm tarballs into bench/.cache/workspace. */
export function benchWorkspace() {
  const dir = path.join(BENCH_DIR, '.cache', 'workspace');
  if (!existsSync(path.join(dir, 'mcp-bench', 'large.d.ts'))) {
    mkdirSync(path.dirname(dir), { recursive: true });
    const r = spawnSync('bash', [path.join(BENCH_DIR, 'make-workspace.sh'), dir], { stdio: 'inherit' });
    if (r.status !== 0) throw new Error('make-workspace.sh failed');
  }
  return dir;
}

/**
 * The server's own reader of its ready line (src/core/ready-line.ts), from the build: bench/ does not import
 * test/, and tests import the same module from src/.
 */
export async function readyLineReader() {
  ensureBuilt();
  const mod = await import(pathToFileURL(path.join(REPO, 'dist/core/ready-line.js')).href);
  return mod.parseReadyLine;
}

/**
 * Start the built bin on a free port, launched as an installed bin is: the file itself through its shebang (and
 * the V8 flags the shebang carries), or with `nodeArgs` through `node <nodeArgs> <bin>` (the soak's probe).
 * `cpu` (optional) pins it to that CPU with taskset. Resolves {url, base, host, port, pid, child, token, stop,
 * stderr}.
 */
export async function startServer(
  workspace,
  env = {},
  bin = path.join(REPO, 'dist/cli/main.js'),
  nodeArgs,
  cpu,
) {
  const parseReadyLine = await readyLineReader();
  const token = randomBytes(24).toString('base64url');
  const args = ['--workspace', workspace, '--port', '0'];
  const [file, argv] = nodeArgs ? [process.execPath, [...nodeArgs, bin, ...args]] : [bin, args];
  // `cpu` pins the server (and what it starts) to that CPU: taskset execs it, so the pid stays the server's.
  const [run, runArgv] = cpu === undefined ? [file, argv] : ['taskset', ['-c', String(cpu), file, ...argv]];
  const child = spawn(run, runArgv, {
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      SERVICE_AUTH_TOKEN: token,
      SERVICE_LOG_LEVEL: 'warn',
      ...env,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    let err = '';
    const t = setTimeout(() => reject(new Error('server did not start: ' + err)), 60_000); // only a hung start
    child.stderr.on('data', (c) => {
      err += c;
      const ready = parseReadyLine(err);
      if (ready) {
        clearTimeout(t);
        const stop = () =>
          new Promise((r) =>
            child.exitCode !== null ? r() : (child.once('exit', r), child.kill('SIGTERM')),
          );
        resolve({
          ...ready,
          pid: child.pid,
          child,
          token,
          stop,
          stderr: () => err,
        });
      }
    });
    child.on('exit', (code) => reject(new Error(`server exited ${code}: ${err}`)));
  });
}

export function ensureBuilt() {
  if (!existsSync(path.join(REPO, 'dist/cli/main.js'))) {
    const r = spawnSync('npm', ['run', 'build', '--silent'], { cwd: REPO, stdio: 'inherit' });
    if (r.status !== 0) throw new Error('build failed');
  }
}

/** bubblewrap's smallest sandbox (the host read-only, its own /dev, /proc, PID and network namespaces) running `true`. */
export const BWRAP_TRUE = [
  '--ro-bind',
  '/',
  '/',
  '--dev',
  '/dev',
  '--proc',
  '/proc',
  '--unshare-pid',
  '--unshare-net',
  'true',
];

/** Whether bubblewrap can create a sandbox here (BWRAP_TRUE runs and exits 0). */
export function bwrapUsable() {
  const r = spawnSync('bwrap', BWRAP_TRUE);
  return !r.error && r.status === 0;
}

/**
 * Headless Chromium (WB_CHROMIUM, else /usr/bin/chromium) driven by playwright-core from node_modules/.cache, as
 * the tests use it: `{ launch() }`, or undefined (with a note on stderr that `what` was not measured) when either
 * is not installed.
 */
export function benchChromium(what) {
  const executablePath = process.env.WB_CHROMIUM ?? '/usr/bin/chromium';
  const pw = path.join(REPO, 'node_modules/.cache/playwright/node_modules/playwright-core/index.mjs');
  if (!existsSync(executablePath) || !existsSync(pw)) {
    process.stderr.write(`${what} not measured: Chromium or playwright-core is not installed\n`);
    return undefined;
  }
  const args = [
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-background-networking',
    '--no-first-run',
  ];
  return {
    launch: async () => (await import(pathToFileURL(pw).href)).chromium.launch({ executablePath, args }),
  };
}

/** The middle value (the upper of the two middle ones when there is an even number). */
export const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** A process's time on CPU so far, in nanoseconds (/proc/<pid>/schedstat). */
export const cpuNs = (pid) => Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]);

export const round = (x, d = 3) => (x == null || Number.isNaN(x) ? null : Math.round(x * 10 ** d) / 10 ** d);

/** A row's result column: its own word when it has one ('reported', 'not installed'), else pass or MISS. */
export const resultWord = (r) => r.result ?? (r.pass ? 'pass' : 'MISS');

/**
 * rows: [{target, measured, limit, unit, pass, note, result?}]; `notes`: lines printed under the table (how it
 * was measured, what was absent).
 */
export function writeResults(name, title, rows, extra = {}, notes = []) {
  mkdirSync(RESULTS, { recursive: true });
  const env = {
    node: process.version,
    cpus: globalThis.navigator?.hardwareConcurrency ?? null,
    date: new Date().toISOString(),
  };
  writeFileSync(
    path.join(RESULTS, `${name}.json`),
    JSON.stringify({ title, environment: env, targets: rows, ...extra }, null, 2) + '\n',
  );
  const md = [
    `# ${title}`,
    '',
    `Measured ${env.date.slice(0, 10)} on Node ${env.node}. Ratios compare numbers taken in the same run.`,
    '',
    '| target | measured | limit | result | note |',
    '|---|---|---|---|---|',
    ...rows.map(
      (r) =>
        `| ${r.target} | ${r.measured ?? 'n/a'} ${r.unit ?? ''} | ${r.op ?? '≤'} ${r.limit} ${r.unit ?? ''} | ${resultWord(r)} | ${r.note ?? ''} |`,
    ),
    '',
    ...(notes.length ? [...notes, ''] : []),
  ].join('\n');
  writeFileSync(path.join(RESULTS, `${name}.md`), md);
  process.stdout.write('\n' + md);
}

/**
 * Start the built bin on stdio, launched as startServer launches it (the file through its shebang), and speak
 * newline-delimited JSON-RPC with it. Resolves nothing itself: returns {child, pid, startedAt, request, notify,
 * close} at once, so a caller can time from the spawn. request(method, params) resolves {msg, at} with `at` the
 * performance.now() when the answer's line arrived.
 */
export function startStdio(workspace, env = {}, bin = path.join(REPO, 'dist/cli/main.js')) {
  const startedAt = performance.now();
  const child = spawn(bin, ['--stdio', '--workspace', workspace], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, SERVICE_LOG_LEVEL: 'warn', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (c) => (stderr += c));
  const waiting = new Map();
  let pending = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk) => {
    const at = performance.now();
    pending += chunk;
    let nl;
    while ((nl = pending.indexOf('\n')) !== -1) {
      const line = pending.slice(0, nl);
      pending = pending.slice(nl + 1);
      if (!line.trim()) continue;
      const msg = JSON.parse(line);
      const w = waiting.get(msg.id);
      if (w) {
        waiting.delete(msg.id);
        w.resolve({ msg, at });
      }
    }
  });
  const exited = new Promise((r) => child.once('exit', r));
  void exited.then((code) => {
    for (const w of waiting.values()) w.reject(new Error(`server exited ${code}: ${stderr}`));
    waiting.clear();
  });
  let id = 0;
  const request = (method, params = {}) =>
    new Promise((resolve, reject) => {
      const n = ++id;
      waiting.set(n, { resolve, reject });
      child.stdin.write(JSON.stringify({ jsonrpc: '2.0', id: n, method, params }) + '\n');
    });
  const notify = (method, params = {}) =>
    child.stdin.write(JSON.stringify({ jsonrpc: '2.0', method, params }) + '\n');
  const close = () => (child.stdin.end(), exited);
  return { child, pid: child.pid, startedAt, request, notify, close, stderr: () => stderr };
}

/**
 * A tools/call client over one keep-alive connection: callTool(name, args) → the JSON-RPC result (rejects on a
 * JSON-RPC error or a body that is not JSON); close() drops the connection.
 */
export function httpToolClient(url, token) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  let id = 0;
  const callTool = (name, args) =>
    new Promise((resolve, reject) => {
      const body = JSON.stringify({
        jsonrpc: '2.0',
        id: ++id,
        method: 'tools/call',
        params: { name, arguments: args },
      });
      const req = http.request(url, {
        method: 'POST',
        agent,
        headers: {
          'content-type': 'application/json',
          authorization: `Bearer ${token}`,
          'content-length': Buffer.byteLength(body),
        },
      });
      req.on('response', (res) => {
        const parts = [];
        res.on('data', (c) => parts.push(c));
        res.on('end', () => {
          try {
            const j = JSON.parse(Buffer.concat(parts).toString('utf8'));
            if (!j.result)
              return reject(new Error(`JSON-RPC error ${res.statusCode}: ${JSON.stringify(j.error)}`));
            resolve(j.result);
          } catch (e) {
            reject(new Error(`HTTP ${res.statusCode}: ${e}`));
          }
        });
      });
      req.on('error', reject);
      req.end(body);
    });
  // `agent`: its one keep-alive connection, for a caller's other requests on it (tools/list before the calls).
  return { callTool, close: () => agent.destroy(), agent };
}

/** httpToolClient's callTool alone, for callers that never close it. */
export const httpToolCaller = (url, token) => httpToolClient(url, token).callTool;

/** `n` exec_command `true` calls one after another, each timed into `out` (when given); fails unless it exited. */
export async function execTrue(call, n, out) {
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    const r = await call('exec_command', { cmd: 'true' });
    out?.push(performance.now() - t0);
    if (r.structuredContent?.status !== 'exited') throw new Error(`exec failed: ${JSON.stringify(r)}`);
  }
}

/**
 * 16 mixed clients (or `clients`) for `seconds` through bench/mcp-bench.mjs against a running server on the
 * benchmark workspace; resolves {errors, ops} of its mixed_clients row.
 */
export function mixedClients(srv, ws, seconds, clients = 16) {
  const out = path.join(mkdtempSync(path.join(tmpdir(), 'wb-mixed-')), 'mixed.json');
  try {
    const r = spawnSync(
      process.execPath,
      [
        path.join(BENCH_DIR, 'mcp-bench.mjs'),
        ...['--base-url', srv.base, '--token', srv.token, '--workspace', ws, '--pid', String(srv.pid)],
        ...[
          '--scenarios',
          'mixed_clients',
          '--mixed-clients',
          String(clients),
          '--duration',
          String(seconds),
        ],
        ...['--quiet', '--out', out],
      ],
      { stdio: ['ignore', 'ignore', 'inherit'] },
    );
    if (r.status !== 0) throw new Error('mcp-bench failed');
    const res = JSON.parse(readFileSync(out, 'utf8'));
    const row = (res.results ?? res.runs ?? []).find?.((x) => x.label === 'mixed_clients') ?? res;
    return { errors: row.errors ?? null, ops: row.ops ?? null };
  } finally {
    rmSync(path.dirname(out), { recursive: true, force: true });
  }
}

/** One tools/list over `agent` (a keep-alive http.Agent); resolves when the answer has been read. */
export function toolsListOnce(srv, agent) {
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
  return new Promise((resolve, reject) => {
    const req = http.request(srv.url, {
      method: 'POST',
      agent,
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${srv.token}`,
        'content-length': Buffer.byteLength(body),
      },
    });
    req.on('response', (res) => {
      res.resume();
      res.on('end', resolve);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * spawnSync of a jailed argv from src/process/jail/jail.ts (ToolJail.wrap / wrapAlone), as the server starts it: the
 * seccomp filter on descriptor 3, the jail's own descriptors after it.
 */
export function runJailed(j, cwd) {
  const fd = j.seccomp ? openSync(j.seccomp, constants.O_RDONLY) : undefined;
  try {
    const stdio = ['ignore', 'pipe', 'pipe', fd ?? 'ignore', ...(j.fds ?? [])];
    return spawnSync(j.file, j.args, { cwd, stdio, maxBuffer: 256 * 1024 * 1024 });
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * Resolves the milliseconds from the ready line to the server's `warm-up done` line (cli/warm-up.ts: the first
 * command's helper, the rehearsals, git's and ripgrep's jails prepared), once it is printed; the server must run
 * with SERVICE_LOG_LEVEL=info (the default) or debug.
 */
export async function whenWarm(srv, ceilingMs = 60_000) {
  const t0 = performance.now();
  for (;;) {
    const m = /(?:debug|info): warm-up done \{"ms":(\d+)\}/.exec(srv.stderr());
    if (m) return Number(m[1]);
    if (performance.now() - t0 > ceilingMs) throw new Error('the server never printed "warm-up done"');
    await new Promise((r) => setTimeout(r, 10));
  }
}
