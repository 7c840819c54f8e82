#!/usr/bin/env node
// apply_patch benchmark: plain Node, no dependencies. Starts the built server
// (node dist/cli/main.js --port 0, bearer token) on a temporary workspace and measures over HTTP keep-alive:
//   1. a one-line change to a 4 KB file, p50 (target ≤ 1.5 ms)
//   2. a 20-hunk patch to a 1 MiB file, p50 (target ≤ 20 ms)
//   3. 100 patches to 100 different files from 8 clients vs 1 client, throughput ratio (target ≥ 4×)
// plus a bare node:http keep-alive round trip in the same run as the floor. Writes bench/results/patch.json
// and bench/results/patch.md (no absolute paths). Run `npm run build` first. Options: --runs N (default 3).
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { startServer } from './lib.mjs';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const RESULTS = path.join(REPO, 'bench', 'results');
const RUNS = Number(process.argv[process.argv.indexOf('--runs') + 1] || 3) || 3;
const SMALL_ITERATIONS = 400;
const LARGE_ITERATIONS = 30;
const THROUGHPUT_FILES = 100;
const CLIENTS = 8;
const CLOCK_TICKS = 100; // USER_HZ on Linux

// ---- workspace -------------------------------------------------------------------------------------------

function smallFile() {
  const lines = [];
  for (let i = 0; lines.join('\n').length < 4000; i++)
    lines.push(`export function helper${i}(value) { return value * ${i} + 1; }`);
  return lines.join('\n') + '\n';
}

function largeFile() {
  const lines = [];
  let size = 0;
  for (let i = 0; size < 1024 * 1024; i++) {
    const l = `  readonly field_${i}: Record<string, number | undefined>; // generated declaration ${i % 97}`;
    lines.push(l);
    size += l.length + 1;
  }
  return lines;
}

function makeWorkspace() {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'wb-patch-bench-'));
  writeFileSync(path.join(dir, 'small.js'), smallFile());
  const large = largeFile();
  writeFileSync(path.join(dir, 'large.d.ts'), large.join('\n') + '\n');
  mkdirSync(path.join(dir, 'many'));
  for (let i = 0; i < THROUGHPUT_FILES; i++)
    writeFileSync(path.join(dir, 'many', `f${i}.txt`), `file ${i}\nstate A\nend\n`);
  return { dir, largeLines: large };
}

const envelope = (...body) => ['*** Begin Patch', ...body, '*** End Patch'].join('\n');

function smallPatches() {
  const a = 'export function helper7(value) { return value * 7 + 1; }';
  const b = 'export function helper7(value) { return value * 7 + 2; }';
  return [
    envelope('*** Update File: small.js', '@@', `-${a}`, `+${b}`),
    envelope('*** Update File: small.js', '@@', `-${b}`, `+${a}`),
  ];
}

function largePatches(lines) {
  const step = Math.floor(lines.length / 21);
  const fwd = ['*** Update File: large.d.ts'];
  const bwd = ['*** Update File: large.d.ts'];
  for (let h = 1; h <= 20; h++) {
    const i = h * step;
    const ctx = [lines[i - 2], lines[i - 1]];
    const after = lines[i + 1];
    const changed = lines[i].replace('number | undefined', 'number | null');
    fwd.push('@@', ...ctx.map((l) => ' ' + l), '-' + lines[i], '+' + changed, ' ' + after);
    bwd.push('@@', ...ctx.map((l) => ' ' + l), '-' + changed, '+' + lines[i], ' ' + after);
  }
  return [envelope(...fwd), envelope(...bwd)];
}

const manyPatch = (i, from, to) =>
  envelope(`*** Update File: many/f${i}.txt`, ` file ${i}`, `-state ${from}`, `+state ${to}`, ' end');

// ---- HTTP ------------------------------------------------------------------------------------------------

function poster({ host, port, token, agent }) {
  let id = 0;
  return (pathName, payload) =>
    new Promise((resolve, reject) => {
      const body = Buffer.from(JSON.stringify(payload ?? { jsonrpc: '2.0', id: ++id, method: 'ping' }));
      const headers = {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'content-length': body.length,
      };
      if (token) headers.authorization = `Bearer ${token}`;
      const req = http.request({ host, port, path: pathName, method: 'POST', agent, headers }, (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode, text: Buffer.concat(chunks).toString() }));
      });
      req.on('error', reject);
      req.end(body);
    });
}

/** CPU time (user + system, all threads) the server process has used, in ms; null where /proc is missing. */
function serverCpuMs(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
  } catch {
    return null;
  }
}

function toolCaller(server, agent, tool) {
  const post = poster({ ...server, agent });
  let id = 0;
  return async (args) => {
    const r = await post('/mcp', {
      jsonrpc: '2.0',
      id: ++id,
      method: 'tools/call',
      params: { name: tool, arguments: args },
    });
    const result = JSON.parse(r.text).result;
    if (r.status !== 200 || !result || result.isError)
      throw new Error(`${tool} failed: ${r.status} ${r.text.slice(0, 400)}`);
  };
}

function patchCaller(server, agent) {
  const post = poster({ ...server, agent });
  let id = 0;
  return async (patch, dryRun = false) => {
    const args = dryRun ? { patch, dry_run: true } : { patch };
    const r = await post('/mcp', {
      jsonrpc: '2.0',
      id: ++id,
      method: 'tools/call',
      params: { name: 'apply_patch', arguments: args },
    });
    const result = JSON.parse(r.text).result;
    if (r.status !== 200 || !result || result.isError)
      throw new Error(`apply_patch failed: ${r.status} ${r.text.slice(0, 400)}`);
  };
}

function startFloor() {
  const body = Buffer.from(
    JSON.stringify({ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'ok' }] } }),
  );
  const srv = http.createServer((req, res) => {
    req.resume();
    req.on('end', () =>
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length }).end(body),
    );
  });
  return new Promise((r) =>
    srv.listen(0, '127.0.0.1', () =>
      r({ host: '127.0.0.1', port: srv.address().port, stop: () => new Promise((s) => srv.close(s)) }),
    ),
  );
}

// ---- measurement -----------------------------------------------------------------------------------------

const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
const median = (xs) => pct(xs, 50);
const r3 = (x) => Math.round(x * 1000) / 1000;

async function latency(call, payloads, iterations, warmup) {
  for (let i = 0; i < warmup; i++) await call(payloads[i % payloads.length]);
  const times = [];
  for (let i = 0; i < iterations; i++) {
    const t = performance.now();
    await call(payloads[(warmup + i) % payloads.length]);
    times.push(performance.now() - t);
  }
  return { p50: pct(times, 50), p90: pct(times, 90), p99: pct(times, 99), n: times.length };
}

/** 100 patches, one per file, spread over `clients` concurrent workers with their own keep-alive sockets. */
async function throughput(server, clients, round) {
  const from = round % 2 ? 'B' : 'A';
  const to = round % 2 ? 'A' : 'B';
  const agent = new http.Agent({ keepAlive: true, maxSockets: clients });
  const call = patchCaller(server, agent);
  // Warm-up: open every client's connection with a dry run (writes nothing).
  await Promise.all(Array.from({ length: clients }, () => call(manyPatch(0, from, to), true)));
  let next = 0;
  const cpu0 = serverCpuMs(server.pid);
  const t = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (next < THROUGHPUT_FILES) {
        const i = next++;
        await call(manyPatch(i, from, to));
      }
    }),
  );
  const seconds = (performance.now() - t) / 1000;
  const cpu1 = serverCpuMs(server.pid);
  agent.destroy();
  return {
    ops: THROUGHPUT_FILES / seconds,
    cpuPerPatch: cpu0 === null || cpu1 === null ? null : (cpu1 - cpu0) / THROUGHPUT_FILES,
  };
}

async function floorMeasure(floor) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CLIENTS });
  const post = poster({ ...floor, agent });
  const lat = await latency(() => post('/'), [null], SMALL_ITERATIONS, 50);
  let done = 0;
  const t = performance.now();
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (done < 2000) {
        done++;
        await post('/');
      }
    }),
  );
  const ops = 2000 / ((performance.now() - t) / 1000);
  agent.destroy();
  return { p50: lat.p50, ops };
}

/**
 * The same file-system sequence the committer runs per file (create temp, write, chmod, fsync, close, link a
 * backup, rename over, free the backup), without the server: how far the disk itself scales from 1 to 8
 * concurrent writers. This bounds the end-to-end ratio.
 */
async function rawFsScaling(clients) {
  const fs = await import('node:fs');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'wb-patch-bench-fs-'));
  const data = Buffer.from('file\nstate B\nend\n');
  for (let i = 0; i < THROUGHPUT_FILES; i++) writeFileSync(path.join(dir, `f${i}`), 'file\nstate A\nend\n');
  const p = (fn, ...args) =>
    new Promise((resolve, reject) => fn(...args, (e, v) => (e ? reject(e) : resolve(v))));
  let seq = 0;
  const one = async (i) => {
    const file = path.join(dir, `f${i}`);
    const tmp = path.join(dir, `.t${seq++}`);
    const fd = await p(fs.open, tmp, 'wx', 0o600);
    fs.writeSync(fd, data);
    fs.fchmodSync(fd, 0o644);
    await p(fs.fsync, fd);
    fs.closeSync(fd);
    const bak = path.join(dir, `.b${seq++}`);
    fs.linkSync(file, bak);
    fs.renameSync(tmp, file);
    await p(fs.unlink, bak);
  };
  let next = 0;
  const t = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (next < THROUGHPUT_FILES) await one(next++);
    }),
  );
  const ops = THROUGHPUT_FILES / ((performance.now() - t) / 1000);
  rmSync(dir, { recursive: true, force: true });
  return ops;
}

// ---- main ------------------------------------------------------------------------------------------------

async function main() {
  if (!existsSync(path.join(REPO, 'dist/cli/main.js')))
    throw new Error('dist/cli/main.js is missing: run `npm run build` first');
  const ws = makeWorkspace();
  const server = await startServer(ws.dir);
  const floor = await startFloor();
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const call = patchCaller(server, agent);
  const readSmall = toolCaller(server, agent, 'read_file');
  const small = smallPatches();
  const large = largePatches(ws.largeLines);
  const runs = [];
  try {
    for (let run = 0; run < RUNS; run++) {
      const f = await floorMeasure(floor);
      const rf = await latency((p) => readSmall(p), [{ path: 'small.js' }], SMALL_ITERATIONS, 50);
      // The file is in its original state between runs (an even number of patches): only the forward patch applies.
      const dry = await latency((p) => call(p, true), [small[0]], SMALL_ITERATIONS, 50);
      const s = await latency(call, small, SMALL_ITERATIONS, 50);
      const l = await latency(call, large, LARGE_ITERATIONS, 4);
      const one = await throughput(server, 1, 2 * run);
      const eight = await throughput(server, CLIENTS, 2 * run + 1);
      const fsOne = await rawFsScaling(1);
      const fsEight = await rawFsScaling(CLIENTS);
      runs.push({
        floor_p50_ms: f.p50,
        floor_ops_8: f.ops,
        read_file_p50_ms: rf.p50,
        small_dry_run_p50_ms: dry.p50,
        small_p50_ms: s.p50,
        small_p90_ms: s.p90,
        small_p99_ms: s.p99,
        large_p50_ms: l.p50,
        large_p90_ms: l.p90,
        ops_1: one.ops,
        ops_8: eight.ops,
        ratio: eight.ops / one.ops,
        server_cpu_ms_per_patch: eight.cpuPerPatch,
        fs_only_ops_1: fsOne,
        fs_only_ops_8: fsEight,
        fs_only_ratio: fsEight / fsOne,
      });
      process.stderr.write(
        `run ${run + 1}/${RUNS}: ${JSON.stringify(runs.at(-1), (k, v) => (typeof v === 'number' ? r3(v) : v))}\n`,
      );
    }
  } finally {
    agent.destroy();
    await server.stop();
    await floor.stop();
    rmSync(ws.dir, { recursive: true, force: true });
  }
  report(runs);
}

function report(runs) {
  const m = (k) => r3(median(runs.map((r) => r[k])));
  const rows = [
    {
      target: 'one-line change to a 4 KB file, p50',
      measured: m('small_p50_ms'),
      unit: 'ms',
      limit: 1.5,
      pass: m('small_p50_ms') <= 1.5,
      note: `p90 ${m('small_p90_ms')} ms, p99 ${m('small_p99_ms')} ms; bare node:http floor p50 ${m('floor_p50_ms')} ms`,
    },
    {
      target: '20-hunk patch to a 1 MiB file, p50',
      measured: m('large_p50_ms'),
      unit: 'ms',
      limit: 20,
      pass: m('large_p50_ms') <= 20,
      note: `p90 ${m('large_p90_ms')} ms`,
    },
    {
      target: '100 patches to 100 files: 8 clients vs 1 client throughput',
      measured: m('ratio'),
      unit: '×',
      limit: 4,
      op: '≥',
      pass: m('ratio') >= 4,
      note: `${m('ops_1')} vs ${m('ops_8')} patches/s; floor with 8 clients ${Math.round(m('floor_ops_8'))} req/s`,
    },
  ];
  const cpu = m('server_cpu_ms_per_patch');
  const context = [
    { measure: 'bare node:http keep-alive round trip, p50', value: `${m('floor_p50_ms')} ms` },
    {
      measure: 'read_file of the same 4 KB file, p50 (server without patching)',
      value: `${m('read_file_p50_ms')} ms`,
    },
    {
      measure: 'the one-line patch with dry_run: true, p50 (parse, lock, read, match; no write)',
      value: `${m('small_dry_run_p50_ms')} ms`,
    },
    {
      measure: 'the one-line patch, p50 (+ temp file, fsync, baseline recheck, rename)',
      value: `${m('small_p50_ms')} ms`,
    },
    {
      measure: 'server CPU per patch during the 8-client run (user + system, all threads)',
      value:
        cpu === null
          ? 'n/a'
          : `${cpu} ms → at most ${Math.round((os.cpus().length * 1000) / cpu)} patches/s on ${os.cpus().length} CPUs if the server had them all`,
    },
    {
      measure: "the committer's file-system sequence alone, no server: 8 vs 1 concurrent writers",
      value: `${m('fs_only_ratio')}× (${Math.round(m('fs_only_ops_1'))} vs ${Math.round(m('fs_only_ops_8'))} files/s): how far the disk itself scales, for comparison with the ratio above`,
    },
  ];
  const environment = {
    node: process.version,
    cpus: os.cpus().length,
    cpu_model: os.cpus()[0]?.model ?? null,
    load_average_1m: r3(os.loadavg()[0]),
    date: new Date().toISOString(),
  };
  mkdirSync(RESULTS, { recursive: true });
  writeFileSync(
    path.join(RESULTS, 'patch.json'),
    JSON.stringify(
      {
        title: 'apply_patch over HTTP',
        environment,
        runs: RUNS,
        targets: rows,
        context,
        per_run: runs.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, r3(v)]))),
      },
      null,
      2,
    ) + '\n',
  );
  const md = [
    '# apply_patch over HTTP',
    '',
    `Built server (\`node dist/cli/main.js\`, bearer auth, handshake-era \`tools/call\`) on a temporary workspace, one keep-alive connection per client; medians of ${RUNS} runs. Every patch really writes (fsynced temp file renamed into place). Node ${environment.node}, ${environment.cpus} CPUs (${environment.cpu_model}), 1-minute load ${environment.load_average_1m} at the end, ${environment.date.slice(0, 10)}.`,
    '',
    '| target | measured | limit | result | note |',
    '|---|---|---|---|---|',
    ...rows.map(
      (r) =>
        `| ${r.target} | ${r.measured} ${r.unit} | ${r.op ?? '≤'} ${r.limit} ${r.unit} | ${r.pass ? 'pass' : 'MISS'} | ${r.note} |`,
    ),
    '',
    'Where the time goes (same run, medians):',
    '',
    '| measure | value |',
    '|---|---|',
    ...context.map((c) => `| ${c.measure} | ${c.value} |`),
    '',
  ].join('\n');
  writeFileSync(path.join(RESULTS, 'patch.md'), md);
  process.stdout.write(md);
}

main().catch((e) => {
  process.stderr.write(`patch-bench: ${e.stack ?? e}\n`);
  process.exit(1);
});
