// The dogfood benchmark: what a model pays to use the server, measured through MCP calls only (no
// model, deterministic steps) against the built bin over HTTP. Scenarios: the bug-fix task (run the test,
// search, read, patch, rerun, git_diff) on a small JS and a small Python project, once with apply_patch and once
// with edit_file (each on its own copy of the projects), a PTY REPL exchange, a long-output command paged with
// read_output, a failed patch corrected on the second try; plus tools/list.
// Usage: npm run build && node bench/dogfood/dogfood-bench.mjs [--dump FILE]   (or npm run bench:dogfood)
//        node bench/dogfood/dogfood-bench.mjs --bin OTHER/dist/cli/main.js --dump FILE   (another build, e.g. an
//        older commit's, measured the same way; results/ is left as it is)
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ensureBuilt, startServer } from '../lib.mjs';
import { makeFixtures } from './fixtures.mjs';
import { catalogSizes, writeDogfood } from './report.mjs';

const bytes = (s) => Buffer.byteLength(s, 'utf8');
/** `--dump FILE` also writes every call's arguments and full result there (for reading, not committed). */
const DUMP = process.argv.includes('--dump') ? process.argv[process.argv.indexOf('--dump') + 1] : undefined;
const dumped = [];
const BIN = process.argv.includes('--bin')
  ? path.resolve(process.argv[process.argv.indexOf('--bin') + 1])
  : undefined;

/** One keep-alive JSON-RPC client (handshake era, bearer auth) that records the bytes of every call. */
function client(url, token) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  let id = 0;
  const post = (method, params) =>
    new Promise((resolve, reject) => {
      const body = JSON.stringify({ jsonrpc: '2.0', id: ++id, method, params });
      const req = http.request(
        url,
        {
          method: 'POST',
          agent,
          headers: {
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            authorization: `Bearer ${token}`,
            'content-length': bytes(body),
          },
        },
        (res) => {
          const chunks = [];
          res.on('data', (c) => chunks.push(c));
          res.on('end', () => {
            const wire = Buffer.concat(chunks);
            const j = JSON.parse(wire.toString('utf8'));
            if (!j.result) return reject(new Error(`${method}: ${JSON.stringify(j.error)}`));
            resolve({ result: j.result, request_bytes: bytes(body), wire_bytes: wire.length });
          });
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  return { post, close: () => agent.destroy() };
}

/** Runs tool calls for one scenario and records each call's bytes. */
function recorder(c, scenario, calls) {
  return async (name, args) => {
    const r = await c.post('tools/call', { name, arguments: args });
    const res = r.result;
    const text = (res.content ?? []).filter((b) => b.type === 'text').reduce((n, b) => n + bytes(b.text), 0);
    calls.push({
      scenario,
      step: calls.filter((x) => x.scenario === scenario).length + 1,
      tool: name,
      is_error: res.isError === true,
      request_bytes: r.request_bytes,
      wire_bytes: r.wire_bytes,
      structured_bytes: bytes(JSON.stringify(res.structuredContent ?? {})),
      text_bytes: text,
    });
    if (DUMP) dumped.push({ scenario, tool: name, arguments: args, result: res });
    return res;
  };
}

const sc = (res) => res.structuredContent ?? {};

/** The bug-fix task; `how` is the writing tool: apply_patch with p.patch, or edit_file with p.edit. */
async function bugFix(call, p, how = 'apply_patch') {
  const first = await call('exec_command', { cmd: p.test });
  if (sc(first).exit_code === 0) throw new Error(`${p.name}: the fixture test should fail first`);
  await call('search_text', { query: p.search });
  await call('read_file', { path: p.file });
  const patched = await call(how, how === 'edit_file' ? { path: p.file, ...p.edit } : { patch: p.patch });
  if (patched.isError) throw new Error(`${p.name}: ${how} failed: ${patched.content[0].text}`);
  const rerun = await call('exec_command', { cmd: p.test });
  if (sc(rerun).exit_code !== 0) throw new Error(`${p.name}: the test should pass after the fix`);
  await call('git_diff', {});
}

const JS_TASK = {
  name: 'js',
  test: 'node test/math.test.js',
  search: 'function add',
  file: 'src/math.js',
  patch: [
    '*** Begin Patch',
    '*** Update File: src/math.js',
    '@@ function add(a, b) {',
    '-  return a - b;',
    '+  return a + b;',
    ' }',
    '*** End Patch',
  ].join('\n'),
  edit: { old_string: '  return a - b;', new_string: '  return a + b;' },
};

const PY_TASK = {
  name: 'py',
  test: 'python3 -m unittest',
  search: 'def triangle_area',
  file: 'shapes.py',
  patch: [
    '*** Begin Patch',
    '*** Update File: shapes.py',
    '@@ def triangle_area(base, height):',
    '-    return base * height',
    '+    return base * height / 2',
    '*** End Patch',
  ].join('\n'),
  edit: { old_string: '    return base * height\n', new_string: '    return base * height / 2\n' },
};

async function repl(call) {
  const started = await call('exec_command', { cmd: 'python3 -q', tty: true, yield_time_ms: 1500 });
  const id = sc(started).command_id;
  if (sc(started).status !== 'running') throw new Error('repl: python3 did not stay running');
  await call('write_stdin', { command_id: id, chars: 'x = 6 * 7\n', yield_time_ms: 1500 });
  await call('write_stdin', { command_id: id, chars: 'print(x)\n', yield_time_ms: 1500 });
  let r = await call('write_stdin', { command_id: id, chars: 'exit()\n', yield_time_ms: 3000 });
  for (let i = 0; i < 10 && sc(r).status === 'running'; i++)
    r = await call('write_stdin', { command_id: id, chars: '', yield_time_ms: 3000 });
}

async function longOutput(call) {
  let r = await call('exec_command', { cmd: 'seq 1 20000', max_output_bytes: 2048 });
  for (let page = 0; page < 2; page++) {
    const next = sc(r).next_action;
    if (!next || next.tool !== 'read_output') throw new Error('long output: no read_output next_action');
    r = await call('read_output', next.arguments);
  }
}

async function patchRetry(call) {
  const wrong = [
    '*** Begin Patch',
    '*** Update File: src/math.js',
    '-/** Multiply two numbers. */',
    '+/** Product of two numbers (a times b). */',
    ' function multiply(a, b) {',
    '*** End Patch',
  ].join('\n');
  const first = await call('apply_patch', { patch: wrong });
  if (!first.isError) throw new Error('patch retry: the first patch should fail');
  const right = wrong.replace('-/** Multiply two numbers. */', '-/** Product of two numbers. */');
  const second = await call('apply_patch', { patch: right });
  if (second.isError) throw new Error(`patch retry: second patch failed: ${second.content[0].text}`);
}

async function main() {
  ensureBuilt();
  const root = mkdtempSync(path.join(tmpdir(), 'wb-dogfood-'));
  const fx = makeFixtures(root);
  // A second temp root of the same length: the task's outputs (stack traces) name the same number of bytes.
  const rootEdit = mkdtempSync(path.join(tmpdir(), 'wb-dogfood-'));
  const fe = makeFixtures(rootEdit);
  const js = await startServer(fx.js, {}, BIN);
  const py = await startServer(fx.py, {}, BIN);
  const jsEdit = await startServer(fe.js, {}, BIN);
  const pyEdit = await startServer(fe.py, {}, BIN);
  const cj = client(js.url, js.token);
  const cp = client(py.url, py.token);
  const cje = client(jsEdit.url, jsEdit.token);
  const cpe = client(pyEdit.url, pyEdit.token);
  const calls = [];
  try {
    const list = await cj.post('tools/list', {});
    const catalog = catalogSizes(list.result.tools, list.wire_bytes);
    await bugFix(recorder(cj, 'js_task', calls), JS_TASK);
    await bugFix(recorder(cp, 'py_task', calls), PY_TASK);
    await bugFix(recorder(cje, 'js_task_edit', calls), JS_TASK, 'edit_file');
    await bugFix(recorder(cpe, 'py_task_edit', calls), PY_TASK, 'edit_file');
    await repl(recorder(cp, 'pty_repl', calls));
    await longOutput(recorder(cj, 'long_output', calls));
    await patchRetry(recorder(cj, 'patch_retry', calls));
    if (!BIN) writeDogfood({ catalog, calls });
    if (DUMP)
      writeFileSync(DUMP, JSON.stringify({ tools: list.result.tools, calls: dumped }, null, 2) + '\n');
  } finally {
    for (const c of [cj, cp, cje, cpe]) c.close();
    for (const s of [js, py, jsEdit, pyEdit]) await s.stop();
    for (const dir of [root, rootEdit]) rmSync(dir, { recursive: true, force: true });
  }
}

await main();
