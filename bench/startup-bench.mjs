// The start-up targets, against the built server launched as an installed bin is (the file through its
// shebang), with `node -e 0` as the floor, alternating in every round so all figures come from the same run:
//   stdio: process start → `initialize` answered ≤ 2× floor; HTTP: process start → the ready line ≤ 2× floor;
//   the first `exec_command echo hi` after start (stdio) ≤ 1.5× the second one; peak RSS ≤ 100 MB.
// Also reported: start → the first tools/list answered (what a client waits for before its first model request).
// The stdio client sends initialize at spawn, then notifications/initialized and tools/list, then the two
// commands one after the other. The first command is measured twice, in two servers: sent as soon as tools/list
// is answered (no client does that: a model's turn comes first), and --think-ms (1000) after it, like a client
// whose model answers quickly.
// --before-bin <another build's dist/cli/main.js> measures that build in the same rounds, as a "before" column
// (--before-label names it in the table).
// Usage: npm run bench:startup [-- --rounds 15] [--think-ms 1000] [--before-bin PATH --before-label TEXT]
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { ensureBuilt, readyLineReader, REPO, RESULTS, round, startStdio } from './lib.mjs';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '15' },
    'think-ms': { type: 'string', default: '1000' },
    'before-bin': { type: 'string' },
    'before-label': { type: 'string', default: 'the build given by --before-bin' },
  },
});
const ROUNDS = Number(values.rounds);
const BIN = path.join(REPO, 'dist/cli/main.js');
const BEFORE = values['before-bin'] ? path.resolve(values['before-bin']) : undefined;
const THINK_MS = Number(values['think-ms']);

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  if (!s.length) return NaN;
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

/** The floor: `node -e 0` from spawn to exit. */
function nodeFloor() {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const c = spawn(process.execPath, ['-e', '0'], { stdio: 'ignore' });
    c.on('error', reject);
    c.on('exit', () => resolve(performance.now() - t0));
  });
}

function peakRssMb(pid) {
  const kb = Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
  return kb / 1024;
}

/**
 * One stdio run: start → initialize answered, → tools/list answered, then after `thinkMs` the first and the
 * second `echo hi`, and the peak RSS.
 */
async function stdioRun(bin, ws, thinkMs) {
  const s = startStdio(ws, {}, bin);
  try {
    const init = await s.request('initialize', {
      protocolVersion: '2025-11-25',
      capabilities: {},
      clientInfo: { name: 'startup-bench', version: '1' },
    });
    if (!init.msg.result) throw new Error(`initialize failed: ${JSON.stringify(init.msg)}`);
    s.notify('notifications/initialized');
    const list = await s.request('tools/list');
    if (!list.msg.result?.tools?.length) throw new Error(`tools/list failed: ${JSON.stringify(list.msg)}`);
    const exec = async () => {
      const t0 = performance.now();
      const r = await s.request('tools/call', { name: 'exec_command', arguments: { cmd: 'echo hi' } });
      const sc = r.msg.result?.structuredContent;
      if (!sc || sc.status !== 'exited' || !String(sc.stdout).includes('hi'))
        throw new Error(
          `exec_command echo hi: ${JSON.stringify(r.msg).slice(0, 500)}; stderr: ${s.stderr()}`,
        );
      return r.at - t0;
    };
    if (thinkMs) await new Promise((r) => setTimeout(r, thinkMs));
    const first = await exec();
    const second = await exec();
    return {
      init: init.at - s.startedAt,
      list: list.at - s.startedAt,
      first,
      second,
      rss: peakRssMb(s.pid),
    };
  } finally {
    await s.close();
  }
}

/** One HTTP run: start → the ready line (`… listening on http://…/mcp`) on stderr; bearer token in the env. */
function httpRun(bin, ws) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(bin, ['--workspace', ws, '--port', '0'], {
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        SERVICE_AUTH_TOKEN: randomBytes(24).toString('base64url'),
        SERVICE_LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let err = '';
    let ready;
    child.stderr.on('data', (c) => {
      err += c;
      if (ready === undefined && parseReadyLine(err)) {
        ready = performance.now() - t0;
        child.kill('SIGTERM');
      }
    });
    child.on('exit', (code) =>
      ready === undefined ? reject(new Error(`exit ${code}: ${err}`)) : resolve(ready),
    );
  });
}

async function measure() {
  const ws = mkdtempSync(path.join(tmpdir(), 'wb-startup-'));
  writeFileSync(path.join(ws, 'README.md'), '# startup bench\n');
  const builds = [['us', BIN], ...(BEFORE ? [['before', BEFORE]] : [])];
  const data = { floor: [] };
  for (const [name] of builds) {
    data[name] = {
      init: [],
      list: [],
      first: [],
      second: [],
      firstThink: [],
      secondThink: [],
      rss: [],
      http: [],
    };
  }
  try {
    // One warm-up round (page cache, bwrap probe of the kernel) that is not counted.
    for (let round = -1; round < ROUNDS; round++) {
      // Alternate: the floor between every measurement, the builds' order flipped every round.
      const order = round % 2 ? builds : [...builds].reverse();
      const floors = [await nodeFloor()];
      for (const [name, bin] of order) {
        const r = await stdioRun(bin, ws, 0);
        floors.push(await nodeFloor());
        const h = await httpRun(bin, ws);
        floors.push(await nodeFloor());
        const t = await stdioRun(bin, ws, THINK_MS);
        floors.push(await nodeFloor());
        if (round < 0) continue;
        const d = data[name];
        d.init.push(r.init, t.init);
        d.list.push(r.list, t.list);
        d.first.push(r.first);
        d.second.push(r.second);
        d.firstThink.push(t.first);
        d.secondThink.push(t.second);
        d.rss.push(r.rss, t.rss);
        d.http.push(h);
      }
      if (round >= 0) data.floor.push(...floors);
      process.stderr.write(`round ${round + 1}/${ROUNDS}\r`);
    }
    process.stderr.write('\n');
  } finally {
    rmSync(ws, { recursive: true, force: true });
  }
  return data;
}

function rows(data, name) {
  const d = data[name];
  const floor = median(data.floor);
  const m = (k) => median(d[k]);
  return [
    {
      what: 'stdio: process start → `initialize` answered',
      us: m('init'),
      floor,
      floorName: '`node -e 0`',
      limit: 2,
    },
    { what: 'HTTP: process start → ready line', us: m('http'), floor, floorName: '`node -e 0`', limit: 2 },
    {
      what: 'first `exec_command echo hi` after start (stdio), sent as soon as tools/list is answered',
      us: m('first'),
      floor: m('second'),
      floorName: 'the second one',
      limit: 1.5,
    },
    {
      what: `first \`exec_command echo hi\` after start (stdio), sent ${THINK_MS / 1000} s after tools/list`,
      us: m('firstThink'),
      floor: m('secondThink'),
      floorName: 'the second one',
      limit: 1.5,
    },
    {
      what: 'stdio: process start → first `tools/list` answered',
      us: m('list'),
      floor,
      floorName: '`node -e 0`',
    },
    { what: 'peak RSS (stdio, after the two commands)', us: Math.max(...d.rss), unit: 'MB', max: 100 },
  ].map((r) => {
    const ratio = r.floor ? r.us / r.floor : null;
    const pass = r.limit ? ratio <= r.limit : r.max ? r.us <= r.max : null;
    return { ...r, ratio: round(ratio, 2), us: round(r.us, 1), floor: round(r.floor, 1), pass };
  });
}

ensureBuilt();
const parseReadyLine = await readyLineReader();
const data = await measure();
const ours = rows(data, 'us');
const before = BEFORE ? rows(data, 'before') : undefined;
const env = { node: process.version, date: new Date().toISOString(), rounds: ROUNDS };
const fmt = (r) => (r.unit === 'MB' ? `${r.us} MB` : `${r.us} ms`);
const target = (r) => (r.limit ? `≤ ${r.limit}×` : r.max ? `≤ ${r.max} MB` : '(reported)');
const result = (r) => (r.pass === null ? '' : r.pass ? 'pass' : 'MISS');
const md = [
  '# Start-up benchmark',
  '',
  `Measured ${env.date.slice(0, 10)} on Node ${env.node}, medians of ${ROUNDS} alternating rounds (the floor runs ` +
    'between every measurement); the server is started as an installed bin, through its shebang.',
  '',
  ...(before ? [`Before: ${values['before-label']}, measured in the same rounds.`, ''] : []),
  `| what | us | floor | ratio | target | result |${before ? ' before | before ratio | before result |' : ''}`,
  `|---|---|---|---|---|---|${before ? '---|---|---|' : ''}`,
  ...ours.map((r, i) => {
    const cells = [
      r.what,
      fmt(r),
      r.floor ? `${r.floorName}: ${r.floor} ms` : '',
      r.ratio ? `${r.ratio}×` : '',
      target(r),
      result(r),
    ];
    if (before) {
      const b = before[i];
      cells.push(fmt(b), b.ratio ? `${b.ratio}×` : '', result(b));
    }
    return `| ${cells.join(' | ')} |`;
  }),
  '',
].join('\n');
/** The rows with a target, in the shape every benchmark's results share (lib.mjs writeResults, run-all.mjs). */
const targets = ours
  .filter((r) => r.pass !== null)
  .map((r) =>
    r.unit === 'MB'
      ? { target: r.what, measured: r.us, unit: 'MB', limit: r.max, pass: r.pass }
      : {
          target: r.what,
          measured: r.ratio,
          unit: '×',
          limit: r.limit,
          pass: r.pass,
          note: `${r.us} ms vs ${r.floorName} ${r.floor} ms${BEFORE ? `; before: ${before[ours.indexOf(r)].us} ms, ${before[ours.indexOf(r)].ratio}×` : ''}`,
        },
  );
mkdirSync(RESULTS, { recursive: true });
writeFileSync(
  path.join(RESULTS, 'startup.json'),
  JSON.stringify(
    { title: 'Start-up benchmark', environment: env, targets, rows: ours, before, samples: data },
    (k, v) => (Array.isArray(v) && typeof v[0] === 'number' ? v.map((x) => round(x, 2)) : v),
    2,
  ) + '\n',
);
writeFileSync(path.join(RESULTS, 'startup.md'), md);
process.stdout.write('\n' + md);
