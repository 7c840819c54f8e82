// The speed target of show_changes (docs/tools.md#review-points): after 20 edited files in the ~8,000-file
// benchmark repository, one show_changes call over HTTP (git in its jail: the private index, a tree, a commit,
// the changes) within 1.5× of running `git status --porcelain` and `git diff --stat` directly, in the same run.
// Each round edits 20 other files, then times both on the same state (their order alternating); medians and
// their ratio go to bench/results/changes.json and changes.md (no absolute machine paths).
// Usage: npm run build && node bench/changes-bench.mjs [--rounds 15]
import { execFileSync, spawn } from 'node:child_process';
import { appendFileSync, cpSync, existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import {
  BENCH_DIR,
  benchWorkspace,
  ensureBuilt,
  httpToolClient,
  round,
  startServer,
  writeResults,
} from './lib.mjs';

const LIMIT = 1.5;
const EDITED = 20;
const { values } = parseArgs({ options: { rounds: { type: 'string', default: '15' } } });
const ROUNDS = Number(values.rounds);

/** A private copy of the benchmark repository (its commits kept), so the edits here touch no other bench. */
function workspace() {
  const dir = path.join(BENCH_DIR, '.cache', 'changes-workspace');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(path.dirname(dir), { recursive: true });
  cpSync(benchWorkspace(), dir, { recursive: true });
  const g = (...a) => execFileSync('git', ['-c', 'safe.directory=*', ...a], { cwd: dir, stdio: 'pipe' });
  if (!existsSync(path.join(dir, '.git'))) g('init', '-q');
  g('add', '-A');
  g(
    '-c',
    'user.name=bench',
    '-c',
    'user.email=bench@invalid',
    'commit',
    '-q',
    '--allow-empty',
    '-m',
    'bench',
  );
  return dir;
}

/** Text files of the repository, for the edits (deterministic order). */
function textFiles(dir) {
  const out = [];
  const visit = (d) => {
    for (const e of readdirSync(d, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      if (e.name === '.git') continue;
      const p = path.join(d, e.name);
      if (e.isDirectory()) visit(p);
      else if (/\.(js|ts|json|md)$/.test(e.name)) out.push(p);
    }
  };
  visit(dir);
  return out;
}

function direct(ws) {
  const run = (args) =>
    new Promise((resolve, reject) => {
      const child = spawn('git', args, { cwd: ws, stdio: ['ignore', 'pipe', 'inherit'] });
      child.stdout.resume();
      child.on('error', reject);
      child.on('close', (code) =>
        code === 0 ? resolve() : reject(new Error(`git ${args[0]} exited ${code}`)),
      );
    });
  const t0 = performance.now();
  return run(['status', '--porcelain'])
    .then(() => run(['diff', '--stat']))
    .then(() => performance.now() - t0);
}

async function viaTool(call) {
  const t0 = performance.now();
  const r = await call('show_changes', {});
  const ms = performance.now() - t0;
  if (r.isError) throw new Error(`show_changes failed: ${r.content?.[0]?.text}`);
  return { ms, files: r.structuredContent.files?.length ?? 0 };
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

ensureBuilt();
const ws = workspace();
const files = textFiles(ws);
const srv = await startServer(ws);
const client = httpToolClient(srv.url, srv.token);
try {
  const first = await viaTool(client.callTool); // the first point: the private index is built once
  const tool = [];
  const git = [];
  let seen = 0;
  for (let i = 0; i < ROUNDS; i++) {
    for (let k = 0; k < EDITED; k++)
      appendFileSync(files[(i * EDITED + k) % files.length], `\n// round ${i}\n`);
    if (i % 2 === 0) {
      const t = await viaTool(client.callTool);
      tool.push(t.ms);
      seen = t.files;
      git.push(await direct(ws));
    } else {
      git.push(await direct(ws));
      const t = await viaTool(client.callTool);
      tool.push(t.ms);
      seen = t.files;
    }
  }
  const ratio = median(tool) / median(git);
  writeResults(
    'changes',
    'show_changes after 20 edited files vs git status --porcelain + git diff --stat',
    [
      {
        target: `show_changes (${EDITED} files edited, ~${files.length}-text-file repository) vs git status + git diff --stat`,
        measured: round(ratio, 2),
        limit: LIMIT,
        unit: '×',
        pass: ratio <= LIMIT && seen === EDITED,
        note: `median of ${ROUNDS} rounds: show_changes ${round(median(tool), 1)} ms, git directly ${round(median(git), 1)} ms; the first call (no point yet) ${round(first.ms, 1)} ms; ${seen} files listed`,
      },
    ],
    { rounds: ROUNDS, tool_ms: tool.map((x) => round(x, 2)), git_ms: git.map((x) => round(x, 2)) },
  );
} finally {
  client.close();
  await srv.stop();
  rmSync(ws, { recursive: true, force: true });
}
