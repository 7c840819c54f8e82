// Soak: days of use compressed into minutes. One server over HTTP and one over stdio serve the same git
// workspace while 16 mixed clients work on it: reads, lists, searches, patches (each adds a line nobody else
// writes), commands run to the end, started and abandoned, killed, PTY sessions, requests cancelled by dropping
// the connection, handshake sessions opened and deleted, stateless 2026-07-28 calls, and a stdio client. Before
// and after, with everything idle: the HTTP server's RSS and heap (after a GC, through bench/soak-probe.mjs),
// open descriptors, processes below it, runtime-directory size and command registry. Passes when every call
// answered as expected (zero errors), every figure is back within its tolerance, and every patch line is in
// the workspace exactly once, and the HTTP server's peak RSS over the whole run (VmHWM) is within the memory
// budget, the server started as `node dist/cli/main.js` without heap flags (it applies its own:
// src/cli/heap-flags.ts). Writes bench/results/soak.{json,md} (or --out), exits 1 on a failure.
// Usage: npm run build && node bench/soak.mjs [--seconds 60] [--clients 16] [--out soak]
import { spawnSync } from 'node:child_process';
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import http from 'node:http';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { NODE_FLAGS } from '../dist/cli/heap-flags.js';
import { BENCH_DIR, ensureBuilt, round, startServer, startStdio, writeResults } from './lib.mjs';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '60' },
    minutes: { type: 'string' },
    clients: { type: 'string', default: '16' },
    out: { type: 'string', default: 'soak' },
  },
});
const SECONDS = values.minutes ? Number(values.minutes) * 60 : Number(values.seconds);
const CLIENTS = Number(values.clients);
const MODERN = '2026-07-28';
const HANDSHAKE = '2025-11-25';
const FILES = 40;
/** The server's memory budget (docs/operations.md): RSS after the soak may exceed its tolerance only below this. */
const RSS_BUDGET_MB = 100;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------------------------------------- workspace
function makeRepo() {
  const ws = mkdtempSync(path.join(tmpdir(), 'wb-soak-'));
  mkdirSync(path.join(ws, 'src'));
  for (let i = 0; i < FILES; i++) {
    const lines = Array.from({ length: 40 }, (_, j) => `export const v${i}_${j} = ${i * j}; // value ${j}`);
    writeFileSync(path.join(ws, 'src', `m${i}.js`), lines.join('\n') + '\n');
  }
  writeFileSync(path.join(ws, 'README.md'), '# soak\n');
  const git = (...a) =>
    spawnSync('git', a, {
      cwd: ws,
      env: {
        ...process.env,
        GIT_AUTHOR_NAME: 's',
        GIT_AUTHOR_EMAIL: 's@x',
        GIT_COMMITTER_NAME: 's',
        GIT_COMMITTER_EMAIL: 's@x',
      },
    });
  git('init', '-q');
  git('add', '-A');
  git('commit', '-qm', 'soak');
  return ws;
}

// ---------------------------------------------------------------------------------------------- server
async function startHttp(ws, probeOut) {
  const env = {
    // Finished commands whose status was returned are dropped soon, so "idle" is reachable in a short run.
    SERVICE_EXEC_RETENTION_S: '5',
    // Abandoned and cancelled commands run on for a moment; room for them beside the 16 clients' own.
    SERVICE_EXEC_MAX_ACTIVE: '64',
    WB_SOAK_PROBE_OUT: probeOut,
  };
  // Started as `node dist/cli/main.js` (with only the probe), as Docker and process managers start it: the heap
  // flags are the server's own doing (src/cli/heap-flags.ts). Where node has no process.execve the started
  // process waits for its relaunched self, which is the one measured; the waiting one is reported beside it.
  const probe = ['--expose-gc', '--import', path.join(BENCH_DIR, 'soak-probe.mjs')];
  const srv = await startServer(ws, env, undefined, probe);
  return { ...srv, started: srv.pid, pid: servingPid(srv.pid) };
}

/** The process that serves: the started one when it runs with the heap flags, else its relaunched child. */
function servingPid(pid) {
  const flagged = (p) => {
    try {
      return readFileSync(`/proc/${p}/cmdline`, 'latin1').split('\0').includes(NODE_FLAGS[0]);
    } catch {
      return false;
    }
  };
  const found = [pid, ...descendants(pid)].find(flagged);
  if (found === undefined) throw new Error('no process of the server runs with its heap flags');
  return found;
}

/** A process's peak resident set (VmHWM) in MB. */
function peakRssMb(pid) {
  const m = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'latin1'));
  return m ? Number(m[1]) / 1024 : NaN;
}

// ---------------------------------------------------------------------------------------------- calls
let rpcId = 0;
// The soak's own connections, closed before each measurement so the server's descriptors count only its own.
let agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

function request(srv, method, body, headers = {}, signal) {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : JSON.stringify(body);
    const req = http.request(srv.url, {
      method,
      agent,
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: `Bearer ${srv.token}`,
        ...(data ? { 'content-length': Buffer.byteLength(data) } : {}),
        ...headers,
      },
    });
    signal?.addEventListener('abort', () => {
      req.destroy();
      reject(Object.assign(new Error('aborted'), { name: 'AbortError' }));
    });
    req.on('response', (res) => {
      const parts = [];
      res.on('data', (c) => parts.push(c));
      res.on('end', () => {
        const text = Buffer.concat(parts).toString();
        resolve({ status: res.statusCode, headers: res.headers, json: text ? JSON.parse(text) : undefined });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(data);
  });
}

const post = (srv, body, headers, signal) => request(srv, 'POST', body, headers, signal);

/** tools/call in an era; returns the result or throws with what went wrong. */
/**
 * tools/call as a well-behaved client makes it: an answer the server marks retryable because a limit is reached
 * (COMMAND_LIMIT_REACHED while abandoned commands run out) is retried after a pause, a bounded number of times.
 */
async function tool(srv, name, args, opts = {}) {
  for (let attempt = 0; ; attempt++) {
    const res = await toolOnce(srv, name, args, opts);
    const err = res.isError ? res.structuredContent?.error : undefined;
    if (!err?.retryable || err.code !== 'COMMAND_LIMIT_REACHED' || attempt >= 40) return res;
    note('retried (limit reached)');
    await sleep(250);
  }
}

async function toolOnce(srv, name, args, { era = 'handshake', session, signal } = {}) {
  const id = ++rpcId;
  let r;
  if (era === 'modern') {
    const _meta = {
      'io.modelcontextprotocol/protocolVersion': MODERN,
      'io.modelcontextprotocol/clientCapabilities': {},
    };
    r = await post(
      srv,
      { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args, _meta } },
      { 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/call', 'mcp-name': name },
      signal,
    );
  } else {
    const h = session ? { 'mcp-session-id': session, 'mcp-protocol-version': HANDSHAKE } : {};
    r = await post(
      srv,
      { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } },
      h,
      signal,
    );
  }
  if (r.status !== 200 || !r.json?.result)
    throw new Error(`${name}: HTTP ${r.status} ${JSON.stringify(r.json).slice(0, 300)}`);
  return r.json.result;
}

function expectOk(name, res) {
  if (res.isError) throw new Error(`${name}: ${JSON.stringify(res.structuredContent).slice(0, 300)}`);
  return res.structuredContent ?? {};
}

/** Polls a command until it has ended (bounded). */
async function finish(srv, id, era) {
  for (let i = 0; i < 200; i++) {
    const r = expectOk(
      'write_stdin',
      await tool(srv, 'write_stdin', { command_id: id, chars: '', yield_time_ms: 2000 }, { era }),
    );
    if (r.status !== 'running') return r;
  }
  throw new Error(`command ${id} never ended`);
}

// ---------------------------------------------------------------------------------------------- clients
const counts = {};
const errors = [];
const patches = [];
const note = (k) => (counts[k] = (counts[k] ?? 0) + 1);

function kinds(srv, stdio) {
  const rnd = (n) => Math.floor(Math.random() * n);
  return {
    async read(c) {
      const era = c % 2 ? 'modern' : 'handshake';
      expectOk(
        'read_file',
        await tool(
          srv,
          'read_file',
          { path: `src/m${rnd(FILES)}.js`, start_line: 1 + rnd(30), max_lines: 10 },
          { era },
        ),
      );
      expectOk('list_dir', await tool(srv, 'list_dir', { path: 'src' }, { era }));
      expectOk('list_files', await tool(srv, 'list_files', { path: 'src' }, { era }));
      note('reads');
    },
    async search(c) {
      const era = c % 2 ? 'modern' : 'handshake';
      expectOk(
        'search_text',
        await tool(srv, 'search_text', { query: `value ${rnd(40)}`, path: 'src' }, { era }),
      );
      expectOk('git_status', await tool(srv, 'git_status', {}, { era }));
      note('searches');
    },
    async patch(c, n) {
      // Each client owns the files it adds; updates append to one shared file at a line nobody else touches.
      const marker = `soak-${c}-${n}`;
      const add = `*** Begin Patch\n*** Add File: soak/c${c}/f${n}.txt\n+${marker}\n*** End Patch\n`;
      expectOk('apply_patch', await tool(srv, 'apply_patch', { patch: add }));
      patches.push({ marker, file: `soak/c${c}/f${n}.txt` });
      note('patches');
    },
    async command(c, n) {
      const era = c % 2 ? 'modern' : 'handshake';
      const r = expectOk(
        'exec_command',
        await tool(srv, 'exec_command', { cmd: `echo run-${c}-${n}` }, { era }),
      );
      if (r.status !== 'exited' || !String(r.stdout).includes(`run-${c}-${n}`))
        throw new Error(`exec: ${JSON.stringify(r)}`);
      // Started and abandoned now and then: nobody polls it again.
      if (n % 4 === 0)
        expectOk(
          'exec_command',
          await tool(srv, 'exec_command', { cmd: 'sleep 1', yield_time_ms: 0 }, { era }),
        );
      note('commands');
    },
    async kill() {
      const r = expectOk(
        'exec_command',
        await tool(srv, 'exec_command', { cmd: 'sleep 30', yield_time_ms: 0 }),
      );
      const k = expectOk('kill_command', await tool(srv, 'kill_command', { command_id: r.command_id }));
      if (k.status === 'running') await finish(srv, r.command_id, 'handshake');
      note('kills');
    },
    async pty(c, n) {
      const r = expectOk(
        'exec_command',
        await tool(srv, 'exec_command', { cmd: 'bash --norc -i', tty: true, yield_time_ms: 500 }),
      );
      if (r.status !== 'running') throw new Error(`pty: ${JSON.stringify(r)}`);
      await tool(srv, 'write_stdin', {
        command_id: r.command_id,
        chars: `echo pty-${c}-${n}\n`,
        yield_time_ms: 500,
      });
      const end = expectOk(
        'write_stdin',
        await tool(srv, 'write_stdin', { command_id: r.command_id, chars: 'exit\n', yield_time_ms: 500 }),
      );
      // Once a final status was returned the command may be dropped (docs/design-notes.md#bash-and-retention): poll only while it runs.
      if (end.status === 'running') await finish(srv, r.command_id, 'handshake');
      note('ptys');
    },
    async cancel() {
      // The client gives up on a long call: the connection is dropped mid-request.
      const ac = new AbortController();
      const p = tool(
        srv,
        'exec_command',
        { cmd: 'sleep 0.5; echo late', yield_time_ms: 5000 },
        { signal: ac.signal },
      );
      setTimeout(() => ac.abort(), 100);
      await p.then(
        () => {},
        (e) => {
          if (e.name !== 'AbortError') throw e;
        },
      );
      note('cancelled');
    },
    async reconnect() {
      const init = await post(srv, {
        jsonrpc: '2.0',
        id: ++rpcId,
        method: 'initialize',
        params: { protocolVersion: HANDSHAKE, capabilities: {}, clientInfo: { name: 'soak', version: '1' } },
      });
      const session = init.headers['mcp-session-id'];
      if (init.status !== 200) throw new Error(`initialize: ${init.status}`);
      const h = session ? { 'mcp-session-id': session, 'mcp-protocol-version': HANDSHAKE } : {};
      await post(srv, { jsonrpc: '2.0', method: 'notifications/initialized' }, h);
      const list = await post(srv, { jsonrpc: '2.0', id: ++rpcId, method: 'tools/list', params: {} }, h);
      if (!list.json?.result?.tools?.length) throw new Error('tools/list in a session');
      expectOk('read_file', await tool(srv, 'read_file', { path: 'README.md' }, { session }));
      if (session) await request(srv, 'DELETE', undefined, h);
      note('sessions');
    },
    async stdio(c, n) {
      const r = await stdio.request('tools/call', {
        name: 'read_file',
        arguments: { path: `src/m${rnd(FILES)}.js`, max_lines: 5 },
      });
      if (r.msg.error || r.msg.result?.isError)
        throw new Error(`stdio read_file: ${JSON.stringify(r.msg).slice(0, 300)}`);
      const e = await stdio.request('tools/call', {
        name: 'exec_command',
        arguments: { cmd: `echo stdio-${c}-${n}` },
      });
      if (!String(e.msg.result?.structuredContent?.stdout).includes(`stdio-${c}-${n}`))
        throw new Error(`stdio exec: ${JSON.stringify(e.msg).slice(0, 300)}`);
      note('stdio');
    },
  };
}

const ROLES = [
  'read',
  'search',
  'patch',
  'command',
  'kill',
  'pty',
  'cancel',
  'reconnect',
  'stdio',
  'read',
  'patch',
  'command',
  'search',
  'cancel',
  'reconnect',
  'patch',
];

/** Each client's call count, kept across the warm-up and the soak so every patch names a new file. */
const turns = new Map();

async function client(k, c, until) {
  const role = ROLES[c % ROLES.length];
  while (Date.now() < until) {
    const n = (turns.get(c) ?? 0) + 1;
    turns.set(c, n);
    try {
      await k[role](c, n);
    } catch (e) {
      errors.push(`${role} #${c}: ${e.message}`);
      if (errors.length > 50) return;
    }
  }
}

// ---------------------------------------------------------------------------------------------- measuring
function descendants(pid) {
  const kids = new Map();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'latin1');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (!kids.has(ppid)) kids.set(ppid, []);
      kids.get(ppid).push(Number(name));
    } catch {
      /* gone */
    }
  }
  const out = [];
  const q = [pid];
  while (q.length)
    for (const k of kids.get(q.shift()) ?? []) {
      out.push(k);
      q.push(k);
    }
  return out;
}

function dirBytes(dir) {
  let n = 0;
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return 0;
  }
  for (const e of entries) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) n += dirBytes(p);
    else
      try {
        n += statSync(p).size;
      } catch {
        /* gone */
      }
  }
  return n;
}

async function snapshot(srv, probeOut, runtimeDir) {
  const env = expectOk('check_exec_environment', await tool(srv, 'check_exec_environment', {}));
  agent.destroy();
  agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  // Until the server has seen its clients go: the count stops falling.
  let last = -1;
  for (let i = 0; i < 100; i++) {
    await sleep(100);
    const n = readdirSync(`/proc/${srv.pid}/fd`).length;
    if (n === last) break;
    last = n;
  }
  rmSync(probeOut, { force: true });
  process.kill(srv.pid, 'SIGUSR2');
  let mem;
  for (let i = 0; i < 100 && !mem; i++) {
    await sleep(50);
    try {
      mem = JSON.parse(readFileSync(probeOut, 'utf8'));
    } catch {
      /* not yet */
    }
  }
  if (!mem) throw new Error('the memory probe did not answer');
  const fdKinds = {};
  for (const fd of readdirSync(`/proc/${srv.pid}/fd`)) {
    let t = '?';
    try {
      t = readlinkSync(`/proc/${srv.pid}/fd/${fd}`)
        .replace(/:\[\d+\]$/, '')
        .replace(/^\/.*/, 'file');
    } catch {
      /* closed meanwhile */
    }
    fdKinds[t] = (fdKinds[t] ?? 0) + 1;
  }
  const fds = Object.values(fdKinds).reduce((a, b) => a + b, 0);
  return {
    rss_mb: mem.rss / 2 ** 20,
    heap_mb: mem.heapUsed / 2 ** 20,
    external_mb: mem.external / 2 ** 20,
    fds,
    processes: descendants(srv.pid).length,
    runtime_kb: dirBytes(runtimeDir) / 1024,
    running: env.usage?.running ?? 0,
    kept: env.usage?.finished_kept ?? 0,
    retained_kb: (env.usage?.retained_output_bytes ?? 0) / 1024,
    fd_kinds: fdKinds,
    kept_limit: 2 * (env.limits?.max_finished_kept ?? 0),
  };
}

/** Waits until no command runs and the finished ones whose status was returned have expired. */
async function idle(srv) {
  for (let i = 0; i < 120; i++) {
    const env = expectOk('check_exec_environment', await tool(srv, 'check_exec_environment', {}));
    if ((env.usage?.running ?? 0) === 0) break;
    await sleep(250);
  }
  await sleep(6000); // SERVICE_EXEC_RETENTION_S=5 plus a margin; the registry sweeps on the next call
  await tool(srv, 'check_exec_environment', {});
}

// ---------------------------------------------------------------------------------------------- main
async function main() {
  ensureBuilt();
  const ws = makeRepo();
  const probeOut = path.join(tmpdir(), `wb-soak-probe-${process.pid}.json`);
  const srv = await startHttp(ws, probeOut);
  const stdio = startStdio(ws);
  try {
    await stdio.request('initialize', {
      protocolVersion: HANDSHAKE,
      capabilities: {},
      clientInfo: { name: 'soak', version: '1' },
    });
    stdio.notify('notifications/initialized');
    const env = expectOk('check_exec_environment', await tool(srv, 'check_exec_environment', {}));
    const home = env.environment?.set?.HOME;
    const runtimeDir = home ? path.dirname(home) : undefined;
    const k = kinds(srv, stdio);
    // Warm-up: every kind of client once for a few seconds, so one-time allocations are in the baseline.
    await Promise.all(Array.from({ length: CLIENTS }, (_, c) => client(k, c, Date.now() + 5000)));
    await idle(srv);
    const before = await snapshot(srv, probeOut, runtimeDir);
    const warmErrors = errors.splice(0);
    const started = Date.now();
    await Promise.all(Array.from({ length: CLIENTS }, (_, c) => client(k, c, started + SECONDS * 1000)));
    const ran = (Date.now() - started) / 1000;
    await idle(srv);
    const after = await snapshot(srv, probeOut, runtimeDir);
    const peak = peakRssMb(srv.pid);
    const launcher = srv.started === srv.pid ? 0 : peakRssMb(srv.started);

    // Every patch line exactly once, in its own file.
    let missing = 0;
    for (const p of patches) {
      let text = '';
      try {
        text = readFileSync(path.join(ws, p.file), 'utf8');
      } catch {
        /* missing */
      }
      if (text !== `${p.marker}\n`) missing++;
    }
    const grep = spawnSync('grep', ['-r', '-o', '-h', 'soak-[0-9]*-[0-9]*$', path.join(ws, 'soak')], {
      encoding: 'utf8',
    });
    const seen = grep.stdout.split('\n').filter(Boolean);
    const dup = seen.length - new Set(seen).size;

    const tol = {
      rss_mb: Math.max(10, before.rss_mb * 0.15),
      heap_mb: Math.max(5, before.heap_mb * 0.2),
      external_mb: 5,
      fds: 2,
      processes: 0,
      runtime_kb: 64,
      running: 0,
      retained_kb: 64,
    };
    const rows = Object.keys(tol).map((key) => {
      const d = after[key] - before[key];
      // The heap (after a GC) and external memory tell a leak; RSS also holds what the allocator keeps after a
      // busy minute, so it passes within its tolerance or within the server's memory budget (100 MB, docs/operations.md).
      const budget = key === 'rss_mb' && after.rss_mb <= RSS_BUDGET_MB;
      return {
        target: `${key.replace(/_/g, ' ')} after vs before`,
        measured: round(d, 2),
        limit: round(tol[key], 2),
        pass: d <= tol[key] || budget,
        note:
          `before ${round(before[key], 2)}, after ${round(after[key], 2)}` +
          (key === 'rss_mb' ? `; or after ≤ ${RSS_BUDGET_MB} MB` : ''),
      };
    });
    rows.push({
      target: 'finished commands kept (abandoned ones included; retention bounds them)',
      measured: after.kept,
      limit: after.kept_limit,
      pass: after.kept <= after.kept_limit,
      note: `before ${before.kept}; a command whose final status was never returned is kept up to twice SERVICE_EXEC_MAX_RETAINED`,
    });
    rows.push({
      target: 'errors during the soak',
      measured: errors.length,
      limit: 0,
      pass: errors.length === 0,
      note: errors.slice(0, 3).join(' | ').slice(0, 400),
    });
    rows.push({
      target: 'patch lines missing or wrong',
      measured: missing,
      limit: 0,
      pass: missing === 0,
      note: `${patches.length} patches`,
    });
    rows.push({
      target: 'patch lines present more than once',
      measured: dup,
      limit: 0,
      pass: dup === 0,
      note: `${seen.length} lines found`,
    });
    rows.push({
      target: 'peak RSS MB of the serving process (VmHWM), started as `node dist/cli/main.js`',
      measured: round(peak, 1),
      limit: RSS_BUDGET_MB,
      pass: peak <= RSS_BUDGET_MB,
      note:
        srv.started === srv.pid
          ? 'the started process itself (process.execve)'
          : `its relaunched child; the started process, which only waits for it, peaked at ${round(launcher, 1)} MB`,
    });
    const total = Object.values(counts).reduce((a, b) => a + b, 0);
    rows.push({
      target: `work done in ${round(ran, 1)} s by ${CLIENTS} clients`,
      measured: total,
      op: '≥',
      limit: CLIENTS,
      pass: total >= CLIENTS,
      note: Object.entries(counts)
        .map(([a, b]) => `${a} ${b}`)
        .join(', '),
    });
    writeResults(values.out, `Soak: ${CLIENTS} mixed clients for ${SECONDS} s, idle before and after`, rows, {
      before,
      after,
      peak_rss_mb: peak,
      launcher_peak_rss_mb: launcher,
      counts,
      warmup_errors: warmErrors,
      errors,
    });
    return rows.every((r) => r.pass) && warmErrors.length === 0;
  } finally {
    await stdio.close();
    srv.child.kill('SIGTERM');
    await new Promise((r) => (srv.child.exitCode !== null ? r() : srv.child.once('exit', r)));
    rmSync(ws, { recursive: true, force: true });
    rmSync(probeOut, { force: true });
  }
}

main().then(
  (ok) => process.exit(ok ? 0 : 1),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
