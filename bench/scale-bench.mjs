// `npm run bench:scale` (docs/operations.md#big-repositories): the server on a tree the size of the Linux kernel
// (bench/scale-tree.mjs: 80,000 files in 4,000 directories, ~870 MB, made once under os.tmpdir() and reused),
// in one run beside the tools a person would use directly, each measured direct and in the same bubblewrap jail
// the server runs rg and git in (dist/process/jail/jail.js):
// - list_files: the first page (max_results 100) against `rg --files` (target ≤ 0.3×), and a full listing
//   (every page, following next_action; every file exactly once) against `rg --files` (≤ 1.5×), with what bounds
//   it measured in the same run: the CPU `rg --files` spends (it walks on every core), the stat of every file
//   by native/wb-stat (the sizes rg never reads), and the same pages sent by a server that does nothing else
//   (bench/page-floor.mjs);
// - list_files {max_results: 100000} and list_dir {recursive, max_depth: 3}: latency and result bytes;
// - search_text for a word on 81 lines against `rg -n` (≤ 1.1×); git_status on the clean tree against
//   `git status --porcelain` (≤ 1.2×);
// - no list or search result over its byte ceiling (PAGE_BYTES of JSON, plus its few other fields);
// - the server's peak RSS (VmHWM from /proc) over these calls (≤ 150 MB);
// - with --mixed (default): 16 mixed clients for --mixed-seconds on the 8,000-file benchmark workspace through
//   bench/mcp-bench.mjs, peak RSS (≤ 100 MB);
// - with --ref-fs-server <path to @modelcontextprotocol/server-filesystem's dist/index.js>: list_dir's bytes
//   against that server's list_directory on the same 40-entry directory (≤ 1.2×).
// Results: bench/results/scale.{json,md}.
// Usage: npm run bench:scale [-- --samples 5] [--no-mixed] [--mixed-seconds 30] [--ref-fs-server PATH]
import { spawn, spawnSync } from 'node:child_process';
import { constants, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import {
  benchWorkspace,
  ensureBuilt,
  httpToolClient,
  median,
  mixedClients,
  REPO,
  round,
  runJailed,
  startServer,
  writeResults,
} from './lib.mjs';
import { makeScaleTree, NEEDLE, NEEDLE_LINES, FILES, scaleTreeDir } from './scale-tree.mjs';
import { startPageFloor } from './page-floor.mjs';

const { values } = parseArgs({
  options: {
    samples: { type: 'string', default: '5' },
    mixed: { type: 'boolean', default: true },
    'no-mixed': { type: 'boolean', default: false },
    'mixed-seconds': { type: 'string', default: '30' },
    'ref-fs-server': { type: 'string' },
  },
});
const SAMPLES = Number(values.samples);
const CORES = availableParallelism();
const ms = (x) => `${round(x, 1)} ms`;
const mb = (kb) => round(kb / 1024, 1);

function statusKb(pid, key) {
  const m = new RegExp(`^${key}:\\s+(\\d+)`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) : NaN;
}

/** CPU time (user + system, ms) of this process's waited-for children so far (/proc/self/stat). */
function childrenCpuMs() {
  const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
  // cutime and cstime are fields 16 and 17 of the file, 14 and 15 after the command name; in clock ticks.
  return ((Number(fields[13]) + Number(fields[14])) * 1000) / CLOCK_TICKS;
}
const CLOCK_TICKS = Number(spawnSync('getconf', ['CLK_TCK']).stdout) || 100;

function timeSync(out, fn) {
  const t0 = performance.now();
  const r = fn();
  out.push(performance.now() - t0);
  if (r.status !== 0) throw new Error(`floor failed (${r.status}): ${String(r.stderr).slice(0, 300)}`);
  return r;
}

/** Biggest JSON of a list or search result seen, against the ceiling. */
const PAGE_BYTES = 64 * 1024;
const CEILING = PAGE_BYTES + 2048;
let biggest = { bytes: 0, call: '' };
function noteBytes(name, args, r) {
  const bytes = Buffer.byteLength(JSON.stringify(r.structuredContent ?? {}));
  if (bytes > biggest.bytes) biggest = { bytes, call: `${name} ${JSON.stringify(args)}` };
  return bytes;
}

async function timedCall(call, out, name, args, check = () => true) {
  const t0 = performance.now();
  const r = await call(name, args);
  out?.push(performance.now() - t0);
  if (r.isError || !check(r.structuredContent))
    throw new Error(`${name} failed: ${JSON.stringify(r.structuredContent).slice(0, 400)}`);
  if (['list_files', 'list_dir', 'search_text'].includes(name)) noteBytes(name, args, r);
  return r;
}

/**
 * Every page of list_files, following next_action; returns the time, pages and files (each must come once).
 * `bodies`: given, each answer is kept there as the JSON-RPC response it came in (for the page floor).
 */
async function fullListing(call, bodies) {
  const t0 = performance.now();
  const seen = new Set();
  let pages = 0;
  let dup = 0;
  for (let args = { max_results: 100_000 }; args; pages++) {
    const r = await timedCall(call, null, 'list_files', args);
    bodies?.push(JSON.stringify({ jsonrpc: '2.0', id: pages + 1, result: r }));
    for (const f of r.structuredContent.files ?? []) {
      if (seen.has(f.path)) dup++;
      else seen.add(f.path);
    }
    args = r.structuredContent.next_action?.arguments;
  }
  return { ms: performance.now() - t0, pages, files: seen.size, dup, paths: [...seen] };
}

/** The same pages from bench/page-floor.mjs, through the same client: one untimed run, then the median of `runs`. */
async function pageFloor(bodies, runs) {
  const floor = await startPageFloor(bodies);
  const { callTool, close } = httpToolClient(floor.url, 'none');
  try {
    const times = [];
    for (let i = 0; i <= runs; i++) {
      const r = await fullListing(callTool);
      if (r.pages !== bodies.length) throw new Error(`the page floor gave ${r.pages} pages`);
      if (i > 0) times.push(r.ms);
    }
    return median(times);
  } finally {
    close();
    await floor.stop();
  }
}

/** native/wb-stat over every listed file, in the batches list_files sends (256), all asked at once. */
async function statFloor(tree, paths, samples) {
  const { StatBatch } = await import(path.join(REPO, 'dist/process/stat-batch.js'));
  const stats = new StatBatch(tree, path.join(REPO, 'dist/native/wb-stat'));
  const keep = setInterval(() => {}, 1000); // the helper's pipes do not hold the event loop
  try {
    await stats.stat([paths[0]]);
    const times = [];
    for (let i = 0; i < samples; i++) {
      const t0 = performance.now();
      const asked = [];
      for (let j = 0; j < paths.length; j += 256) asked.push(stats.stat(paths.slice(j, j + 256)));
      const got = (await Promise.all(asked)).flat();
      times.push(performance.now() - t0);
      if (got.filter((st) => st?.kind === 'file').length !== paths.length)
        throw new Error('wb-stat missed files');
    }
    return median(times);
  } finally {
    clearInterval(keep);
    stats.close();
  }
}

/**
 * What a full listing cannot cost less than: the server's own walker (dist/workspace/walk.js) over the whole
 * tree in this process, bare and with the lstat per file that list_files' size_bytes takes, and `find` printing
 * every file's size (C, no ignore rules; .git pruned). Medians of `samples`.
 */
async function walkFloors(tree, samples) {
  const { walk } = await import(path.join(REPO, 'dist/workspace/walk.js'));
  const root = { lexical: tree, real: tree };
  const start = { abs: tree, real: tree, rel: '.' };
  const once = async (sized) => {
    const t0 = performance.now();
    let bytes = 0;
    await walk(root, start, {}, (e) => {
      if (sized && e.type === 'file') bytes += e.stat?.size ?? 0;
    });
    if (sized && bytes === 0) throw new Error('the sized walk saw no bytes');
    return performance.now() - t0;
  };
  const out = { walk: [], walkSized: [], findFiles: [], findSized: [] };
  const find = ['.', '-name', '.git', '-prune', '-o', '-type', 'f', '-printf', '%s %P\\n'];
  for (let i = 0; i < samples; i++) {
    out.walk.push(await once(false));
    out.walkSized.push(await once(true));
    const names = find.slice(0, -2).concat('-print');
    timeSync(out.findFiles, () => spawnSync('find', names, { cwd: tree, maxBuffer: 64 * 1024 * 1024 }));
    timeSync(out.findSized, () => spawnSync('find', find, { cwd: tree, maxBuffer: 64 * 1024 * 1024 }));
  }
  return Object.fromEntries(Object.entries(out).map(([k, v]) => [k, median(v)]));
}

/** A directory of 40 entries (30 files, 10 directories, names of 6–18 characters) for the byte comparison. */
function fortyEntries() {
  const dir = path.join(tmpdir(), 'workbench-scale-listing-v1');
  mkdirSync(dir, { recursive: true });
  const words = [
    'config',
    'handler',
    'routes',
    'schema',
    'session',
    'worker',
    'parser',
    'client',
    'server',
    'utils',
  ];
  for (let i = 0; i < 30; i++)
    writeFileSync(
      path.join(dir, `${words[i % 10]}${i > 9 ? `_${i}` : ''}.${['ts', 'js', 'json'][i % 3]}`),
      'x'.repeat(100 + i * 97),
    );
  for (let i = 0; i < 10; i++) mkdirSync(path.join(dir, `${words[i]}-dir`), { recursive: true });
  return dir;
}

/** Bytes of the reference filesystem server's list_directory answer over stdio (newline-delimited JSON-RPC). */
async function referenceBytes(serverJs, dir) {
  const child = spawn(process.execPath, [serverJs, dir], { stdio: ['pipe', 'pipe', 'ignore'] });
  let buf = '';
  const waits = new Map();
  child.stdout.on('data', (c) => {
    buf += c;
    for (let i; (i = buf.indexOf('\n')) >= 0;) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      waits.get(JSON.parse(line).id)?.(line);
    }
  });
  const req = (id, method, params) =>
    new Promise((r) => {
      waits.set(id, r);
      child.stdin.write(JSON.stringify({ jsonrpc: '2.0', id, method, params }) + '\n');
    });
  await req(1, 'initialize', {
    protocolVersion: '2025-06-18',
    capabilities: {},
    clientInfo: { name: 'bench', version: '1' },
  });
  child.stdin.write(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) + '\n');
  const line = await req(2, 'tools/call', { name: 'list_directory', arguments: { path: dir } });
  child.kill();
  return Buffer.byteLength(line);
}

/** Bytes of our list_dir answer for `dir` (as one JSON-RPC response over HTTP). */
async function ourListBytes(dir) {
  const srv = await startServer(path.dirname(dir), { SERVICE_STATE_DIR: 'off' });
  try {
    const r = await fetch(srv.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${srv.token}` },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: { name: 'list_dir', arguments: { path: path.basename(dir) } },
      }),
    });
    return Buffer.byteLength(await r.text());
  } finally {
    await srv.stop();
  }
}

/** 16 mixed clients through bench/mcp-bench.mjs on the benchmark workspace; the server's VmHWM after. */
async function mixedRun(seconds) {
  const ws = benchWorkspace();
  const srv = await startServer(ws, { SERVICE_PERMISSION_MODE: 'safe', SERVICE_STATE_DIR: 'off' });
  try {
    await new Promise((r) => setTimeout(r, 1000));
    const { errors, ops } = mixedClients(srv, ws, seconds);
    return { hwmKb: statusKb(srv.pid, 'VmHWM'), errors, ops };
  } finally {
    await srv.stop();
  }
}

async function main() {
  ensureBuilt();
  const t0 = Date.now();
  const tree = scaleTreeDir();
  const summary = makeScaleTree(tree);
  process.stderr.write(
    `tree ${tree}: ${summary.files} files, ${round(summary.bytes / 1e6, 0)} MB (${Math.round((Date.now() - t0) / 1000)} s)\n`,
  );
  const { ToolJail } = await import(path.join(REPO, 'dist/process/jail/jail.js'));
  const { findRipgrep } = await import(path.join(REPO, 'dist/workspace/search/engines.js'));
  const { createRuntimeDirs } = await import(path.join(REPO, 'dist/process/runtime-dir.js'));
  const rt = mkdtempSync(path.join(tmpdir(), 'wb-scale-rt-'));
  const jail = new ToolJail({
    requested: 'auto',
    pathVar: process.env.PATH,
    workspaceReal: tree,
    dirs: createRuntimeDirs({ configured: rt }, tree),
    privateFiles: [],
  });
  const jailed = jail.status().in_use !== null;
  const rg = findRipgrep(process.env).path;
  const rgFiles = ['--files', '--no-config'];
  const rgSearch = ['-n', '--no-config', '--fixed-strings', NEEDLE, '.'];
  const gitStatus = ['--no-optional-locks', 'status', '--porcelain'];
  const floors = { rgFiles: [], rgFilesJ: [], rgN: [], rgNJ: [], gitD: [], gitJ: [] };
  const m = { first: [], big: [], dir: [], search: [], git: [], full: [] };
  const srv = await startServer(tree, { SERVICE_PERMISSION_MODE: 'safe', SERVICE_STATE_DIR: 'off' });
  const { callTool: call, close } = httpToolClient(srv.url, srv.token);
  const baseKb = statusKb(srv.pid, 'VmRSS');
  let full;
  let bodies = [];
  let rgCpuMs = 0;
  let hwmKb = NaN;
  let bigBytes = 0;
  let dirBytes = 0;
  // ripgrep's jail holds the directory it searches, given as a descriptor (jail.ts wrapAlone), as the server runs it.
  const treeFd = openSync(tree, constants.O_RDONLY | constants.O_DIRECTORY);
  try {
    // Warm: the page cache (the tree is read once whole) and the server's code paths.
    spawnSync(rg, rgSearch, { cwd: tree, maxBuffer: 64 * 1024 * 1024 });
    spawnSync('git', gitStatus, { cwd: tree });
    await timedCall(call, null, 'list_files', { max_results: 100 });
    await timedCall(call, null, 'search_text', { query: NEEDLE });
    await timedCall(call, null, 'git_status', {});
    await fullListing(call); // its first run also starts native/wb-stat
    for (let i = 0; i < SAMPLES; i++) {
      const cpu0 = childrenCpuMs();
      timeSync(floors.rgFiles, () => spawnSync(rg, rgFiles, { cwd: tree, maxBuffer: 64 * 1024 * 1024 }));
      rgCpuMs += childrenCpuMs() - cpu0;
      if (jailed) timeSync(floors.rgFilesJ, () => runJailed(jail.wrapAlone(rg, rgFiles, tree, treeFd), tree));
      await timedCall(call, m.first, 'list_files', { max_results: 100 }, (s) => s.files.length === 100);
      const b = await timedCall(call, m.big, 'list_files', { max_results: 100_000 });
      bigBytes = Buffer.byteLength(JSON.stringify(b));
      const d = await timedCall(call, m.dir, 'list_dir', { recursive: true, max_depth: 3 });
      dirBytes = Buffer.byteLength(JSON.stringify(d));
      timeSync(floors.rgN, () => spawnSync(rg, rgSearch, { cwd: tree, maxBuffer: 64 * 1024 * 1024 }));
      if (jailed) timeSync(floors.rgNJ, () => runJailed(jail.wrapAlone(rg, rgSearch, tree, treeFd), tree));
      await timedCall(
        call,
        m.search,
        'search_text',
        { query: NEEDLE },
        (s) => s.matches.length === NEEDLE_LINES,
      );
      timeSync(floors.gitD, () => spawnSync('git', gitStatus, { cwd: tree }));
      if (jailed) timeSync(floors.gitJ, () => runJailed(jail.wrap('git', gitStatus, tree), tree));
      await timedCall(call, m.git, 'git_status', {}, (s) => !s.entries);
      if (i < Math.min(3, SAMPLES)) {
        bodies = [];
        full = await fullListing(call, bodies);
        m.full.push(full.ms);
      }
    }
  } finally {
    close();
    hwmKb = statusKb(srv.pid, 'VmHWM');
    await srv.stop();
    rmSync(rt, { recursive: true, force: true });
  }
  const floorsMs = await walkFloors(tree, SAMPLES);
  floorsMs.pages = await pageFloor(bodies, Math.min(3, SAMPLES));
  floorsMs.stats = await statFloor(tree, full.paths, SAMPLES);
  floorsMs.rgCpu = rgCpuMs / SAMPLES;
  const md = Object.fromEntries(
    Object.entries({ ...m, ...floors }).map(([k, v]) => [k, v.length ? median(v) : NaN]),
  );
  const unavoidable = floorsMs.findFiles + floorsMs.stats + floorsMs.pages;
  const both = (ours, direct, jail) =>
    jailed
      ? `direct ${ms(direct)} (${round(ours / direct, 2)}×), in the jail ${ms(jail)} (${round(ours / jail, 2)}×)`
      : `direct ${ms(direct)}`;
  const ratioRow = (target, ours, direct, jail, limit, extra = '') => {
    const rd = ours / direct;
    const rj = jailed ? ours / jail : NaN;
    const which =
      rd <= limit
        ? rj <= limit
          ? 'both floors'
          : 'direct floor'
        : rj <= limit
          ? 'jailed floor only'
          : 'neither';
    return {
      target,
      measured: round(rd, 2),
      limit,
      unit: '× (direct)',
      pass: rd <= limit || rj <= limit,
      note: `${ms(ours)}; ${both(ours, direct, jail)}; met against: ${which}${extra}`,
    };
  };
  const rows = [
    ratioRow('list_files first page (max_results 100) vs rg --files', md.first, md.rgFiles, md.rgFilesJ, 0.3),
    ratioRow(
      `list_files full listing (${full.pages} pages, ${full.files} files) vs rg --files`,
      md.full,
      md.rgFiles,
      md.rgFilesJ,
      1.5,
      `; every file once: ${full.files === FILES && full.dup === 0 ? 'yes' : `NO (${full.files} files, ${full.dup} repeats)`}` +
        `; rg --files spends ${ms(floorsMs.rgCpu)} of CPU (${round(floorsMs.rgCpu / md.rgFiles, 1)} cores); ` +
        `what no server can skip: reading the directories (find -type f ${ms(floorsMs.findFiles)}), ` +
        `the sizes (wb-stat of every file ${ms(floorsMs.stats)}) and the pages (sent by a server that does ` +
        `nothing else, ${ms(floorsMs.pages)}): ${ms(unavoidable)}, at best ${ms(unavoidable / CORES)} on ` +
        `${CORES} cores (${round(unavoidable / CORES / md.rgFiles, 2)}×); ` +
        `our walk alone: ${ms(floorsMs.walk)} bare, ${ms(floorsMs.walkSized)} with an lstat per file; ` +
        `find -printf %s ${ms(floorsMs.findSized)}`,
    ),
    ratioRow(`search_text (${NEEDLE_LINES} matches) vs rg -n`, md.search, md.rgN, md.rgNJ, 1.1),
    ratioRow('git_status (clean) vs git status --porcelain', md.git, md.gitD, md.gitJ, 1.2),
    {
      target: 'list_files {max_results: 100000}: one page',
      measured: round(md.big, 1),
      limit: '-',
      unit: 'ms',
      op: '',
      pass: true,
      note: `${round(bigBytes / 1024, 1)} KiB response (the issue measured 2,020 ms and 7 MB)`,
    },
    {
      target: 'list_dir {recursive, max_depth: 3}',
      measured: round(md.dir, 1),
      limit: '-',
      unit: 'ms',
      op: '',
      pass: true,
      note: `${round(dirBytes / 1024, 1)} KiB response (the issue measured 1,738 ms)`,
    },
    {
      target: 'largest list/search result (structuredContent JSON)',
      measured: biggest.bytes,
      limit: CEILING,
      unit: 'B',
      pass: biggest.bytes <= CEILING,
      note: biggest.call.slice(0, 80),
    },
    {
      target: 'server peak RSS (VmHWM) over these calls',
      measured: mb(hwmKb),
      limit: 150,
      unit: 'MB',
      pass: mb(hwmKb) <= 150,
      note: `RSS at start ${mb(baseKb)} MB`,
    },
  ];
  const listing = fortyEntries();
  const ours = await ourListBytes(listing);
  if (values['ref-fs-server']) {
    const ref = await referenceBytes(values['ref-fs-server'], listing);
    rows.push({
      target: 'list_dir of a 40-entry directory vs the filesystem reference server',
      measured: round(ours / ref, 2),
      limit: 1.2,
      unit: '×',
      pass: ours / ref <= 1.2,
      note: `${ours} vs ${ref} bytes`,
    });
  } else
    rows.push({
      target: 'list_dir of a 40-entry directory (bytes of the response)',
      measured: ours,
      limit: '-',
      op: '',
      unit: 'B',
      pass: true,
      note: 'pass --ref-fs-server to compare with the filesystem reference server',
    });
  if (values.mixed && !values['no-mixed']) {
    const mixed = await mixedRun(Number(values['mixed-seconds']));
    rows.push({
      target: `16 mixed clients for ${values['mixed-seconds']} s (8,000-file workspace): server peak RSS`,
      measured: mb(mixed.hwmKb),
      limit: 100,
      unit: 'MB',
      pass: mb(mixed.hwmKb) <= 100,
      note: `${mixed.ops ?? '?'} ops, ${mixed.errors ?? '?'} errors (bench/mcp-bench.mjs mixed_clients)`,
    });
  }
  writeResults('scale', 'Big repositories: the 80,000-file tree beside rg and git, and peak memory', rows, {
    tree: { ...summary, dir: path.basename(tree) },
    jailed_floors: jailed,
    samples: SAMPLES,
    medians_ms: Object.fromEntries(Object.entries(md).map(([k, v]) => [k, round(v, 2)])),
    full_listing: { ...full, paths: undefined },
    walk_floors_ms: Object.fromEntries(Object.entries(floorsMs).map(([k, v]) => [k, round(v, 2)])),
  });
}

await main();
