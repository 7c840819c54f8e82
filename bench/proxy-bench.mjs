// The cost of `safe` mode's filtering proxy (docs/tools.md#network-in-safe-mode): the same downloads from a local
// HTTPS server, once from a `safe` command (127.0.0.1:3128 in its sandbox → the server's relay, which asks the
// server about each CONNECT → upstream) and once direct (a command in the same kind of sandbox on the host's
// network), in alternating rounds of one run.
// Targets: a 20 MB download through the proxy ≤ 1.2× direct; 8 parallel package fetches (256 KiB each) ≤ 1.3×
// direct. The eight are eight TLS connections opened at once in both (curl --parallel-immediate; the test server
// counts them and a command that opened fewer fails the run): left to itself, curl may wait for its first
// connection and carry the other seven over it one after another, which it does more often direct than through
// the proxy, so the two sides would not be the same work. 40 alternating rounds: one sample varies by ±30 % on
// two shared cores, and fewer rounds moved the ratio by ±0.1 from run to run. Timed inside the command (curl's
// clock; date before and after curl for the eight), so the sandbox's start-up, which `safe` pays either way, is
// not counted; whole-command times are reported beside them. Each command starts SETTLE_MS after the one before,
// as a model's call comes long after the result it read: what the servers do between commands (a `safe` server
// prepares the next sandbox when a command ends, src/process/spawner/prepared.ts; the kernel tears down the last
// command's network namespace) is then done before it, on either side.
// Then what a `trusted` command's own network namespace and bridge add to starting it: `exec_command true` in
// `trusted` (own namespace, the proxy) against the same sandbox on the host's network (`dangerous` under
// SERVICE_SANDBOX=bwrap: trusted itself never has the host's network, docs/security-model.md#network-per-mode),
// p50 of alternating batches, back to back; target ≤ 10 ms.
// The floor in the same rounds: the direct command again, through bench/floor-proxy.c (a CONNECT proxy that checks
// nothing, two threads per connection copying bytes the moment they arrive), built with the C compiler on PATH;
// what any proxy costs on this machine, reported beside each download row (left out without a compiler).
// Usage: npm run build && node bench/proxy-bench.mjs [--rounds 40] [--starts 200] [--settle 200]
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import { parseArgs } from 'node:util';
import os, { loadavg, tmpdir } from 'node:os';
import { ensureBuilt, execTrue, httpToolCaller, round, startServer, writeResults } from './lib.mjs';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '40' },
    starts: { type: 'string', default: '200' },
    settle: { type: 'string', default: '200' },
  },
});
const ROUNDS = Number(values.rounds);
const STARTS = Number(values.starts);
const BIG = 20 * 1024 * 1024;
const PKG = 256 * 1024;
const NAME = 'registry.npmjs.org';
/** The pause before each measured command, in ms (see the header); 0 sends them back to back. */
const SETTLE_MS = Number(values.settle);
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
};

ensureBuilt();
const ws = mkdtempSync(path.join(tmpdir(), 'wb-proxy-bench-'));
const certDir = mkdtempSync(path.join(tmpdir(), 'wb-proxy-cert-'));
execFileSync(
  'openssl',
  [
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-days',
    '1',
    '-subj',
    `/CN=${NAME}`,
    '-addext',
    `subjectAltName=DNS:${NAME}`,
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-keyout',
    path.join(certDir, 'key.pem'),
    '-out',
    path.join(certDir, 'cert.pem'),
  ],
  { stdio: 'ignore' },
);
// The certificate where a sandboxed command can read it (the workspace).
writeFileSync(path.join(ws, 'ca.pem'), readFileSync(path.join(certDir, 'cert.pem')));
const big = Buffer.alloc(BIG, 'x');
const pkg = Buffer.alloc(PKG, 'p');
let tlsConnections = 0;
const site = https.createServer(
  { key: readFileSync(path.join(certDir, 'key.pem')), cert: readFileSync(path.join(certDir, 'cert.pem')) },
  (req, res) => {
    const body = req.url === '/big' ? big : pkg;
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': body.length });
    res.end(body);
  },
);
site.on('secureConnection', () => tlsConnections++);
await new Promise((r) => site.listen(0, '127.0.0.1', r));
const port = site.address().port;

const proxied = await startServer(ws, {
  SERVICE_SANDBOX: 'bwrap',
  WB_TEST_RESOLVE: `${NAME}=127.0.0.1`,
  SERVICE_NETWORK_ALLOW_PRIVATE: '127.0.0.1',
});
// Direct: the same sandbox (bubblewrap, seccomp) with the host's network, as `dangerous` has it under
// SERVICE_SANDBOX=bwrap, so only the network path differs.
const direct = await startServer(ws, { SERVICE_PERMISSION_MODE: 'dangerous', SERVICE_SANDBOX: 'bwrap' });
// `trusted`: its own network namespace, out through the proxy to any public host. Its baseline on the host's
// network is `direct` (the same bubblewrap sandbox and seccomp filter): trusted itself no longer runs on the
// host's network in any configuration (its network fails closed, docs/security-model.md#network-per-mode).
const trusted = await startServer(ws, { SERVICE_PERMISSION_MODE: 'trusted', SERVICE_SANDBOX: 'bwrap' });
const callP = httpToolCaller(proxied.url, proxied.token);
const callD = httpToolCaller(direct.url, direct.token);
const callT = httpToolCaller(trusted.url, trusted.token);
const callH = callD;
const load = [loadavg()[0]];

const info = await callP('check_exec_environment', {});
if (info.structuredContent.sandbox.network !== 'proxy') {
  console.error(`the safe server has no proxy: ${info.structuredContent.sandbox.reason}`);
  process.exit(1);
}

/** bench/floor-proxy.c, built and listening; undefined without a C compiler. */
async function startFloor() {
  const bin = path.join(certDir, 'floor-proxy');
  const source = path.join(path.dirname(new URL(import.meta.url).pathname), 'floor-proxy.c');
  const cc = ['cc', 'gcc', 'clang'].find(
    (c) => spawnSync(c, ['--version'], { stdio: 'ignore' }).status === 0,
  );
  if (!cc || spawnSync(cc, ['-O2', '-pthread', '-o', bin, source], { stdio: 'inherit' }).status !== 0)
    return undefined;
  const child = spawn(bin, [String(port)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const listening = await new Promise((resolve) => {
    child.stdout.once('data', (d) => resolve(Number(String(d).trim())));
    child.once('exit', () => resolve(undefined));
  });
  return listening ? { port: listening, stop: () => child.kill() } : undefined;
}
const floor = await startFloor();
if (!floor)
  console.error('proxy-bench: no C compiler or the floor proxy did not start: the floor is left out');

const base = `https://${NAME}:${port}`;
// Direct: curl resolves the name itself (to the same 127.0.0.1 the proxy was told), with no proxy at all.
// The floor: the direct command through the floor proxy (curl resolves nothing; the proxy goes to the test server).
const ROUTE = {
  P: '',
  D: `--noproxy '*' --resolve ${NAME}:${port}:127.0.0.1`,
  F: `--proxy http://127.0.0.1:${floor?.port}`,
};
const curl = (w) => `curl -sS --fail --cacert ca.pem ${ROUTE[w]}`;
const bigCmd = (w) => `${curl(w)} -o /dev/null -w '%{time_total}' ${base}/big`;
const pkgCmd = (w) =>
  `s=$(date +%s%N); ${curl(w)} -Z --parallel-immediate --parallel-max 8 ${Array.from({ length: 8 }, (_, i) => `-o /dev/null ${base}/pkg/${i}`).join(' ')}` +
  ` && e=$(date +%s%N) && echo $(( (e - s) / 1000 ))`;

async function time(call, cmd, unit, connections) {
  await new Promise((r) => setTimeout(r, SETTLE_MS));
  tlsConnections = 0;
  const t0 = performance.now();
  const r = await call('exec_command', { cmd, yield_time_ms: 30_000 });
  const whole = performance.now() - t0;
  const sc = r.structuredContent;
  if (sc.status !== 'exited' || sc.exit_code !== 0) throw new Error(`${cmd}: ${JSON.stringify(sc)}`);
  const inner = Number(String(sc.stdout).trim()) * unit; // ms
  if (connections !== undefined && tlsConnections !== connections)
    throw new Error(`${cmd}: ${tlsConnections} TLS connections, not ${connections}`);
  return { inner, whole };
}

const samples = { bigP: [], bigD: [], pkgP: [], pkgD: [], bigPw: [], bigDw: [], pkgPw: [], pkgDw: [] };
if (floor) Object.assign(samples, { bigF: [], pkgF: [], bigFw: [], pkgFw: [] });
load.push(loadavg()[0]);
// A warm-up of each, then rounds in turning order so machine load falls on all alike.
const ways = floor ? ['P', 'D', 'F'] : ['P', 'D'];
for (const w of ways) await time(w === 'P' ? callP : callD, bigCmd(w), 1000);
for (let i = 0; i < ROUNDS; i++) {
  const order = ways.map((_, k) => ways[(i + k) % ways.length]);
  for (const w of order) {
    const c = w === 'P' ? callP : callD;
    const b = await time(c, bigCmd(w), 1000);
    const p = await time(c, pkgCmd(w), 0.001, 8);
    samples[`big${w}`].push(b.inner);
    samples[`big${w}w`].push(b.whole);
    samples[`pkg${w}`].push(p.inner);
    samples[`pkg${w}w`].push(p.whole);
  }
}

// Start cost of trusted's own namespace: alternating batches of 20, after a warm-up of each.
const startT = [];
const startD = [];
await execTrue(callT, 10);
await execTrue(callH, 10);
for (let i = 0; i < STARTS; i += 20) {
  const pair =
    (i / 20) % 2
      ? [
          [callH, startD],
          [callT, startT],
        ]
      : [
          [callT, startT],
          [callH, startD],
        ];
  for (const [c, out] of pair) await execTrue(c, Math.min(20, STARTS - i), out);
}
load.push(loadavg()[0]);
const tInfo = (await callT('check_exec_environment', {})).structuredContent.sandbox;
if (tInfo.network !== 'proxy') throw new Error(`trusted has no proxy: ${tInfo.reason}`);
const hInfo = (await callH('check_exec_environment', {})).structuredContent.sandbox;
if (hInfo.network !== 'host' || hInfo.in_use !== 'bwrap')
  throw new Error(`not the host network: ${hInfo.reason}`);

const m = Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, median(v)]));
const added = median(startT) - median(startD);
const bigRatio = m.bigP / m.bigD;
const pkgRatio = m.pkgP / m.pkgD;
/** What the floor proxy measured, beside a download row. */
const floorNote = (k) =>
  floor
    ? `; the floor (bench/floor-proxy.c, no checks) ${round(m[`${k}F`], 1)} ms, ${round(m[`${k}F`] / m[`${k}D`], 2)}× direct`
    : '';
const rows = [
  {
    target: '20 MB download through the proxy vs direct (curl time_total, median)',
    measured: round(bigRatio, 2),
    limit: 1.2,
    unit: '×',
    pass: bigRatio <= 1.2,
    note: `proxy ${round(m.bigP, 1)} ms, direct ${round(m.bigD, 1)} ms; whole command ${round(m.bigPw, 1)} vs ${round(m.bigDw, 1)} ms (the sandbox's start-up included)${floorNote('big')}`,
  },
  {
    target: '8 parallel 256 KiB package fetches through the proxy vs direct (median)',
    measured: round(pkgRatio, 2),
    limit: 1.3,
    unit: '×',
    pass: pkgRatio <= 1.3,
    note: `proxy ${round(m.pkgP, 1)} ms, direct ${round(m.pkgD, 1)} ms; whole command ${round(m.pkgPw, 1)} vs ${round(m.pkgDw, 1)} ms${floorNote('pkg')}; ${SETTLE_MS} ms between commands`,
  },
  {
    target: 'exec_command true in trusted: added by its own network namespace and the bridge (p50)',
    measured: round(added, 2),
    limit: 10,
    unit: 'ms',
    pass: added <= 10,
    note: `trusted ${round(median(startT), 2)} ms vs the same sandbox on the host's network (dangerous under bwrap) ${round(median(startD), 2)} ms, ${startT.length} samples each; load average ${load.map((x) => round(x, 1)).join(' → ')} on ${os.cpus().length} cores`,
  },
];
writeResults('proxy', 'Filtering proxy of safe mode: downloads through it vs direct', rows, {
  rounds: ROUNDS,
  settle_ms: SETTLE_MS,
  samples_ms: Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, v.map((x) => round(x, 2))])),
  start_ms: { trusted: startT.map((x) => round(x, 2)), host_network: startD.map((x) => round(x, 2)) },
  load_average: load,
});

await Promise.all([proxied.stop(), direct.stop(), trusted.stop()]);
floor?.stop();
site.close();
rmSync(ws, { recursive: true, force: true });
rmSync(certDir, { recursive: true, force: true });
