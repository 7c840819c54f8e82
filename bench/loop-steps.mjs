// The coding loop of bench/loop-bench.mjs, step by step: the six tool calls a model makes to fix the bug of the
// dogfood JS project (bench/dogfood/fixtures.mjs), the same six steps done directly on the host, and a client
// for a stdio MCP server (the Python reference server, when installed). Every step is timed from the client's
// side (wall time from sending to the whole answer) and its answer checked, so a failed step never counts.
import { spawn } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';

/** The steps in order, and how the tables name them. */
export const STEPS = [
  ['exec_first', 'exec_command `node test/math.test.js` (first command after start)'],
  ['search', 'search_text "function add"'],
  ['read', 'read_file src/math.js'],
  ['patch', 'apply_patch (the one-line fix)'],
  ['exec_second', 'exec_command `node test/math.test.js` (second)'],
  ['diff', 'git_diff'],
];

/** What each direct step runs in the tables. */
export const DIRECT = {
  exec_first: '`node test/math.test.js` spawned',
  search: '`rg -n --fixed-strings "function add" .`',
  read: 'readFile of src/math.js',
  patch: 'writeFile of the fixed src/math.js',
  exec_second: '`node test/math.test.js` spawned',
  diff: '`git diff`',
};

const TEST = 'node test/math.test.js';
const FILE = 'src/math.js';
const PATCH = [
  '*** Begin Patch',
  `*** Update File: ${FILE}`,
  '@@ function add(a, b) {',
  '-  return a - b;',
  '+  return a + b;',
  ' }',
  '*** End Patch',
].join('\n');

/**
 * The six tool calls through `call(name, args)` → a tools/call result. The checks read the whole answer as
 * text, so they hold for any server with these tools (this one and the Python reference server alike).
 */
export async function toolLoop(call) {
  const ms = {};
  const step = async (key, name, args, ok) => {
    const t0 = performance.now();
    const r = await call(name, args);
    ms[key] = performance.now() - t0;
    const all = JSON.stringify(r);
    if (r.isError || !ok(all)) throw new Error(`${key}: ${name} answered ${all.slice(0, 600)}`);
  };
  await step('exec_first', 'exec_command', { cmd: TEST }, (a) => a.includes('AssertionError'));
  await step('search', 'search_text', { query: 'function add' }, (a) => a.includes(FILE));
  await step('read', 'read_file', { path: FILE }, (a) => a.includes('return a - b'));
  await step('patch', 'apply_patch', { patch: PATCH }, () => true);
  await step('exec_second', 'exec_command', { cmd: TEST }, (a) => a.includes('ok: 2 tests passed'));
  await step('diff', 'git_diff', {}, (a) => a.includes('+  return a + b;'));
  return ms;
}

/**
 * The environment every side's programs start from: the one the servers are started with (bench/lib.mjs), not
 * this process's, which may carry variables a user's shell does not (NODE_EXTRA_CA_CERTS alone makes every
 * `node` start load the CA bundle: 120 against 40 ms here).
 */
export const HOST_ENV = { PATH: process.env.PATH, HOME: process.env.HOME };

/** Runs `file args` in `cwd` to its end, with HOST_ENV; resolves {code, out}. */
export function run(file, args, cwd) {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { cwd, env: HOST_ENV, stdio: ['ignore', 'pipe', 'pipe'] });
    const out = [];
    child.stdout.on('data', (c) => out.push(c));
    child.stderr.on('data', (c) => out.push(c));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, out: Buffer.concat(out).toString('utf8') }));
  });
}

/** The same six steps done directly on the host in `dir`, timed the same way; `rg` is the server's ripgrep. */
export async function directLoop(dir, rg) {
  const ms = {};
  const step = async (key, fn, ok) => {
    const t0 = performance.now();
    const r = await fn();
    ms[key] = performance.now() - t0;
    if (!ok(r)) throw new Error(`direct ${key}: ${JSON.stringify(r).slice(0, 600)}`);
    return r;
  };
  const file = path.join(dir, FILE);
  await step(
    'exec_first',
    () => run('node', ['test/math.test.js'], dir),
    (r) => r.code !== 0,
  );
  const rgArgs = ['-n', '--fixed-strings', '--', 'function add', '.'];
  await step(
    'search',
    () => run(rg, rgArgs, dir),
    (r) => r.out.includes(FILE),
  );
  const text = await step(
    'read',
    () => readFile(file, 'utf8'),
    (t) => t.includes('return a - b'),
  );
  await step(
    'patch',
    () => writeFile(file, text.replace('return a - b', 'return a + b')),
    () => true,
  );
  await step(
    'exec_second',
    () => run('node', ['test/math.test.js'], dir),
    (r) => r.code === 0,
  );
  await step(
    'diff',
    () => run('git', ['diff'], dir),
    (r) => r.out.includes('+  return a + b;'),
  );
  return ms;
}

/**
 * A stdio MCP server started from a command line (`{workspace}` in it is replaced by `dir`, which is also its
 * working directory), initialized as a client does. Resolves {call(name, args), close()}.
 */
export async function stdioServer(commandLine, dir) {
  const [file, ...args] = commandLine
    .split(/\s+/)
    .filter(Boolean)
    .map((w) => w.replaceAll('{workspace}', dir));
  const child = spawn(file, args, {
    cwd: dir,
    // PYTHONPATH, when set, finds a reference server run from a checkout (docs/benchmarks.md, the coding loop).
    env: { ...HOST_ENV, ...(process.env.PYTHONPATH ? { PYTHONPATH: process.env.PYTHONPATH } : {}) },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (c) => (stderr += c));
  const waiting = new Map();
  let pending = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk) => {
    pending += chunk;
    for (let nl; (nl = pending.indexOf('\n')) !== -1;) {
      const line = pending.slice(0, nl).trim();
      pending = pending.slice(nl + 1);
      const msg = line.startsWith('{') ? JSON.parse(line) : undefined;
      waiting.get(msg?.id)?.(msg);
      waiting.delete(msg?.id);
    }
  });
  const exited = new Promise((r) => child.once('exit', r));
  let id = 0;
  const request = (method, params) =>
    Promise.race([
      new Promise((resolve) => {
        waiting.set(++id, resolve);
        child.stdin.write(JSON.stringify({ jsonrpc: '2.0', id, method, params }) + '\n');
      }),
      exited.then((code) => Promise.reject(new Error(`${file} exited ${code}: ${stderr.slice(-2000)}`))),
    ]);
  const send = (method, params) => {
    const msg = { jsonrpc: '2.0', method, params };
    child.stdin.write(JSON.stringify(msg) + '\n');
  };
  const clientInfo = { name: 'loop-bench', version: '1' };
  await request('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo });
  send('notifications/initialized', {});
  await request('tools/list', {});
  const call = async (name, args) => {
    const msg = await request('tools/call', { name, arguments: args });
    if (!msg.result) throw new Error(`${name}: ${JSON.stringify(msg.error)}`);
    return msg.result;
  };
  const close = () => (child.stdin.end(), child.kill('SIGTERM'), exited);
  return { call, close };
}
