// The "fair under exhaustion" targets, against the built server (bearer mode, then OAuth mode):
//   during a flood of --flood (10,000, or what the descriptor limit allows) connections that never send a request,
//     re-opened as soon as the server closes them, an authenticated client's tools/list — each on a new
//     connection — is answered within 1 s (median and max over --tries);
//   while --attackers loops send wrong passwords without pause (each from its own client, on a new page whenever
//     one is withdrawn), the operator — their own client, their own page, the right password — has a code within
//     10 s (median and max over --sign-ins), with the generated password and with a configured one.
// Also reported: tools/list without a flood (same run), the attackers' guess rate and answers, and, for a
// configured password, an attacker that registers a new client for every guess (the global budget's case).
// The flood runs in a worker thread, so the measuring client is not queued behind it in one event loop. Two
// floods: one re-opening each connection 5 s after the server closed it, one re-opening it at once (as fast as
// the machine can; the kernel's listen queue, not the server, is then what a newcomer waits for).
// Plain Node, no dependencies. Usage: npm run bench:pressure [-- --flood 10000] [--tries 20] [--sign-ins 10]
//   [--attackers 8]
import { spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { URLSearchParams } from 'node:url';
import { parseArgs } from 'node:util';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { ensureBuilt, round, startServer, writeResults } from './lib.mjs';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------------------------------------------------------
// The flood (worker thread): `count` connections that send nothing; each one the server closes is opened again, and
// one the server has not closed after `recycleMs` (the kernel's accept queue was full: it exists only on this
// side) is replaced, so the pressure on the server never lets up until the main thread says stop.
function flood({ host, port, count, recycleMs, reconnectMs }) {
  let stopping = false;
  const stats = { opened: 0, connected: 0, closedByServer: 0, recycled: 0, errors: 0, live: 0 };
  const open = () => {
    if (stopping) return;
    stats.opened++;
    stats.live++;
    const s = net.connect({ host, port });
    let byUs = false;
    const t = setTimeout(() => {
      byUs = true;
      stats.recycled++;
      s.destroy();
    }, recycleMs);
    s.resume();
    s.once('connect', () => stats.connected++);
    s.on('error', () => stats.errors++);
    s.once('close', () => {
      clearTimeout(t);
      stats.live--;
      if (!byUs) stats.closedByServer++;
      // A failed connect (no port left, refused) backs off a little instead of spinning.
      setTimeout(open, byUs ? 0 : Math.max(1, reconnectMs));
    });
  };
  let i = 0;
  const ramp = () => {
    for (let k = 0; k < 200 && i < count; k++, i++) open();
    if (i < count) setImmediate(ramp);
  };
  ramp();
  const report = setInterval(() => parentPort.postMessage({ type: 'stats', stats }), 250);
  parentPort.on('message', (m) => {
    if (m !== 'stop') return;
    stopping = true;
    clearInterval(report);
    parentPort.postMessage({ type: 'stats', stats });
    process.exit(0);
  });
}

// ---------------------------------------------------------------------------------------------------------------
async function main() {
  const { values } = parseArgs({
    options: {
      flood: { type: 'string' },
      tries: { type: 'string', default: '20' },
      'sign-ins': { type: 'string', default: '10' },
      attackers: { type: 'string', default: '8' },
    },
  });
  const fdLimit = Number(spawnSync('sh', ['-c', 'ulimit -n'], { encoding: 'utf8' }).stdout.trim()) || 1024;
  // This process holds the whole flood; keep a margin for the measuring clients and Node itself.
  const FLOOD = Number(values.flood ?? Math.min(10_000, fdLimit - 1024));
  const TRIES = Number(values.tries);
  const SIGN_INS = Number(values['sign-ins']);
  const ATTACKERS = Number(values.attackers);
  ensureBuilt();
  const ws = mkdtempSync(path.join(tmpdir(), 'wb-pressure-'));
  writeFileSync(path.join(ws, 'a.txt'), 'alpha\n');
  const rows = [];
  const extra = { fdLimit, flood: FLOOD };
  try {
    await connectionFlood(ws, FLOOD, TRIES, rows, extra);
    await passwordAttack(ws, SIGN_INS, ATTACKERS, rows, extra);
  } finally {
    rmSync(ws, { recursive: true, force: true });
  }
  writeResults('pressure', 'Fair under exhaustion', rows, extra);
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  if (!s.length) return NaN;
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

/** One tools/list on a new connection; resolves {ms, status} (status 0: the connection failed). */
function toolsList(url, token) {
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
  return new Promise((resolve) => {
    const t0 = performance.now();
    const req = http.request(url, {
      method: 'POST',
      agent: false,
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${token}`,
        'content-length': Buffer.byteLength(body),
      },
    });
    req.setTimeout(30_000, () => req.destroy(new Error('timeout')));
    req.on('response', (res) => {
      res.resume();
      res.on('end', () => resolve({ ms: performance.now() - t0, status: res.statusCode }));
    });
    req.on('error', () => resolve({ ms: performance.now() - t0, status: 0 }));
    req.end(body);
  });
}

async function latencies(url, token, tries) {
  const out = [];
  for (let i = 0; i < tries; i++) {
    out.push(await toolsList(url, token));
    await sleep(250);
  }
  return out;
}

/** The kernel's count of connections dropped because a listen queue was full (whole machine; indicative). */
function listenOverflows() {
  const text = readFileSync('/proc/net/netstat', 'utf8').split('\n');
  const head = text.find((l) => l.startsWith('TcpExt:'))?.split(/\s+/) ?? [];
  const vals = text.filter((l) => l.startsWith('TcpExt:'))[1]?.split(/\s+/) ?? [];
  return Number(vals[head.indexOf('ListenOverflows')] ?? NaN);
}

/**
 * tools/list during a flood of `count` connections that never send a request. `reconnectMs`: how soon a flood
 * connection the server closed is opened again — 5 s is a pool of connections refilled in rounds, as flood
 * tools do; 0 re-opens each one the moment it is closed, as fast as this machine can.
 */
async function floodRound(srv, count, tries, reconnectMs) {
  const overflows0 = listenOverflows();
  const worker = new Worker(new URL(import.meta.url), {
    workerData: { host: srv.host, port: srv.port, count, recycleMs: 3_000, reconnectMs },
  });
  let stats = {};
  worker.on('message', (m) => m.type === 'stats' && (stats = m.stats));
  // Under pressure once every flood connection has been opened and the server has had to close some.
  while (!(stats.opened >= count && stats.closedByServer > 0)) await sleep(100);
  const t0 = performance.now();
  const under = await latencies(srv.url, srv.token, tries);
  const seconds = (performance.now() - t0) / 1000;
  const s0 = { ...stats };
  worker.postMessage('stop');
  await new Promise((r) => worker.once('exit', r));
  const after = await toolsList(srv.url, srv.token);
  return { under, stats: s0, seconds, after: after.status, overflows: listenOverflows() - overflows0 };
}

async function connectionFlood(ws, count, tries, rows, extra) {
  const srv = await startServer(ws);
  try {
    await latencies(srv.url, srv.token, 3); // warm-up
    const quiet = await latencies(srv.url, srv.token, tries);
    rows.push({
      target: `tools/list on a new connection, no flood (median / max of ${tries})`,
      measured: `${round(median(quiet.map((r) => r.ms)), 1)} / ${round(Math.max(...quiet.map((r) => r.ms)), 1)}`,
      unit: 'ms',
      op: '',
      limit: 'reference',
      pass: quiet.every((r) => r.status === 200),
    });
    extra.quietTries = quiet.map((r) => round(r.ms, 1));
    extra.floods = [];
    // The target is the idle flood ("10,000 idle connections"), each connection re-opened 5 s after
    // the server closes it. Re-opened at once, it is a connect flood that keeps the kernel's listen queue full,
    // below the server: reported, with the drops counted, not a target (README "Under attack").
    for (const [reconnectMs, how, target] of [
      [5_000, 're-opened 5 s after the server closes it', true],
      [0, 're-opened the moment the server closes it', false],
    ]) {
      const f = await floodRound(srv, count, tries, reconnectMs);
      const ms = f.under.map((r) => r.ms);
      const ok = f.under.filter((r) => r.status === 200).length;
      const rate = Math.round(f.stats.closedByServer / Math.max(1, f.seconds + 3));
      extra.floods.push({
        reconnectMs,
        tries: ms.map((x) => round(x, 1)),
        stats: f.stats,
        listenOverflows: f.overflows,
      });
      rows.push({
        target: `tools/list on a new connection during a ${count}-connection flood, each ${how} (median / max of ${tries})`,
        measured: `${round(median(ms), 1)} / ${round(Math.max(...ms), 1)}`,
        unit: 'ms',
        op: target ? '≤' : '',
        limit: target ? 1000 : 'reported',
        pass: ok === tries && (!target || Math.max(...ms) <= 1000),
        note: `${ok}/${tries} answered 200 (never 503); the server closed ${f.stats.closedByServer} flood connections (~${rate}/s), the kernel dropped ${f.overflows} connection attempts on full listen queues; after the flood: ${f.after}`,
      });
    }
  } finally {
    await srv.stop();
  }
}

// ---------------------------------------------------------------------------------------------------------------
// The password page.
const CALLBACK = 'http://127.0.0.1:9/callback';

function pkce() {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** node:http with its own agent per caller (keep-alive), returning {status, location, text}. */
function caller() {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const call = (url, { method = 'GET', headers = {}, body } = {}) =>
    new Promise((resolve) => {
      const req = http.request(url, { method, agent, headers });
      req.setTimeout(60_000, () => req.destroy(new Error('timeout')));
      req.on('response', (res) => {
        const parts = [];
        res.on('data', (c) => parts.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode,
            location: res.headers.location,
            retryAfter: Number(res.headers['retry-after'] ?? 0),
            text: Buffer.concat(parts).toString('utf8'),
          }),
        );
      });
      req.on('error', (e) => resolve({ status: 0, text: String(e) }));
      req.end(body);
    });
  return { call, close: () => agent.destroy() };
}

async function registerClient(c, base) {
  const r = await c.call(`${base}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ redirect_uris: [CALLBACK], client_name: 'bench' }),
  });
  return JSON.parse(r.text).client_id;
}

async function openPage(c, base, clientId, challenge = pkce().challenge) {
  const u = new URL(`${base}/oauth/authorize`);
  for (const [k, v] of Object.entries({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: CALLBACK,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    state: 's',
  }))
    u.searchParams.set(k, v);
  const r = await c.call(u.href);
  return /name="request" value="([^"]+)"/.exec(r.text)?.[1];
}

const submit = (c, base, handle, password) =>
  c.call(`${base}/oauth/authorize`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ request: handle, password, action: 'approve' }).toString(),
  });

/** An attacker loop until `state.stop`: wrong passwords without pause, a new page (and `rotate`: a new client) as needed. */
async function attacker(base, state, rotate) {
  const c = caller();
  let client = await registerClient(c, base);
  let handle = await openPage(c, base, client);
  while (!state.stop) {
    if (rotate) {
      client = await registerClient(c, base);
      handle = await openPage(c, base, client);
    }
    const r = await submit(c, base, handle, `wrong-${randomBytes(6).toString('hex')}`);
    state.answers[r.status] = (state.answers[r.status] ?? 0) + 1;
    state.guesses++;
    if (r.location?.includes('code=')) state.codes++;
    if (!/name="request"/.test(r.text)) handle = await openPage(c, base, client);
  }
  c.close();
}

/** The operator: own client and page, the right password; follows Retry-After like a person would, up to `capMs`. */
async function operatorSignIn(base, password, capMs) {
  const c = caller();
  try {
    const t0 = performance.now();
    const client = await registerClient(c, base);
    const handle = await openPage(c, base, client);
    for (;;) {
      const r = await submit(c, base, handle, password);
      if (r.status === 302 && r.location?.includes('code=')) return { ms: performance.now() - t0, ok: true };
      if (r.status !== 429 || performance.now() - t0 > capMs) {
        const why = /<p[^>]*>([^<]+)<\/p>/.exec(r.text)?.[1] ?? '';
        return { ms: performance.now() - t0, ok: false, why: `${r.status} ${why}`.trim() };
      }
      await sleep(Math.max(1, r.retryAfter) * 1000);
    }
  } finally {
    c.close();
  }
}

const why = (times) => {
  const reasons = [...new Set(times.filter((t) => !t.ok).map((t) => t.why))];
  return reasons.length ? ` (refused: ${reasons.join('; ')})` : '';
};

async function passwordAttack(ws, signIns, attackers, rows, extra) {
  const configured = 'correct horse battery staple';
  const cases = [
    { name: 'generated password', env: {}, rotate: false, target: true },
    { name: 'configured password', env: { SERVICE_OAUTH_PASSWORD: configured }, rotate: false, target: true },
    {
      name: 'configured password, attacker registering a new client for every guess',
      env: { SERVICE_OAUTH_PASSWORD: configured },
      rotate: true,
      target: false,
      signIns: 3,
    },
  ];
  extra.passwordCases = [];
  for (const k of cases) {
    const srv = await startServer(ws, { SERVICE_AUTH_MODE: 'oauth', SERVICE_AUTH_TOKEN: '', ...k.env });
    try {
      const password =
        k.env.SERVICE_OAUTH_PASSWORD ??
        /generated an OAuth password[^\n]*\n\n\s+(\S+)/.exec(srv.stderr())?.[1];
      if (!password) throw new Error('no generated password in the banner');
      const state = { stop: false, guesses: 0, codes: 0, answers: {} };
      const loops = Array.from({ length: attackers }, () => attacker(srv.base, state, k.rotate));
      while (state.guesses < 4 * attackers) await sleep(50); // the attack is under way
      const t0 = performance.now();
      const g0 = state.guesses;
      const times = [];
      for (let i = 0; i < (k.signIns ?? signIns); i++) {
        times.push(await operatorSignIn(srv.base, password, 60_000));
        await sleep(500);
      }
      const rate = (state.guesses - g0) / ((performance.now() - t0) / 1000);
      state.stop = true;
      await Promise.all(loops);
      const ms = times.map((t) => t.ms);
      const ok = times.filter((t) => t.ok).length;
      extra.passwordCases.push({
        case: k.name,
        attackers,
        answers: state.answers,
        guesses: state.guesses,
        codes: state.codes,
        times: ms.map((x) => round(x, 1)),
      });
      rows.push({
        target: `operator signs in (register → page → code) while ${attackers} attackers guess, ${k.name} (median / max of ${times.length})`,
        measured: `${round(median(ms), 1)} / ${round(Math.max(...ms), 1)}`,
        unit: 'ms',
        op: k.target ? '≤' : '',
        limit: k.target ? 10_000 : 'reported',
        pass: ok === times.length && (!k.target || Math.max(...ms) <= 10_000),
        note: `${ok}/${times.length} signed in${why(times)}; attackers: ${round(rate, 1)} guesses/s, answers ${JSON.stringify(state.answers)}, codes obtained: ${state.codes}`,
      });
    } finally {
      await srv.stop();
    }
  }
}

// Last, so every declaration above is initialised before main() runs.
if (!isMainThread) flood(workerData);
else await main();
