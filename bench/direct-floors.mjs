// git_status, git_diff, git_log and search_text on a small repository against the same program run directly on
// the host, with the arguments the tool gives it (src/tools/git/, src/workspace/search/ripgrep.ts): what a
// call costs above the program itself, the jail included. The rows beside them in bench/confinement-bench.mjs
// compare with the program in the same jail, which shows the server's own cost but not the jail's.
// Target: each ≤ the direct program + 3 ms. Used by bench/confinement-bench.mjs.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { makeJsProject } from './dogfood/fixtures.mjs';
import { httpToolCaller, median, REPO, round, startServer } from './lib.mjs';

const LIMIT_MS = 3;

function git(dir, ...args) {
  const r = spawnSync('git', ['-c', 'user.name=Bench', '-c', 'user.email=bench@example.invalid', ...args], {
    cwd: dir,
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
}

/** The dogfood JS project with six commits and the fix to src/math.js left uncommitted: a small repository. */
function smallRepo(dir) {
  makeJsProject(dir);
  for (let i = 1; i <= 5; i++) {
    writeFileSync(
      path.join(dir, 'README.md'),
      readFileSync(path.join(dir, 'README.md'), 'utf8') + `\nNote ${i}.\n`,
    );
    git(dir, 'commit', '-q', '-am', `Note ${i}`);
  }
  const file = path.join(dir, 'src/math.js');
  writeFileSync(file, readFileSync(file, 'utf8').replace('return a - b', 'return a + b'));
  return dir;
}

/** Each tool: its arguments, the check of its answer, and the program it runs with the same arguments. */
async function cases(rg) {
  const { LOG_FORMAT } = await import(path.join(REPO, 'dist/git/parse-log.js'));
  const diffCommon = ['--no-color', '--no-ext-diff', '--no-textconv', '--ignore-submodules=dirty'];
  return [
    {
      tool: 'git_status',
      args: {},
      ok: (s) => s.ok === true && JSON.stringify(s).includes('src/math.js'),
      argv: [
        'git',
        '--no-optional-locks',
        'status',
        '--porcelain=v2',
        '-z',
        '--branch',
        '--renames',
        '--ignore-submodules=dirty',
      ],
    },
    {
      tool: 'git_diff',
      args: {},
      ok: (s) => s.ok === true && JSON.stringify(s).includes('return a + b'),
      argv: ['git', 'diff', ...diffCommon, '--submodule=short', '-M', '--patch', '--unified=3'],
    },
    {
      tool: 'git_log',
      args: {},
      ok: (s) => s.ok === true && s.commits?.length === 6,
      argv: [
        'git',
        'log',
        '-z',
        `--format=${LOG_FORMAT}`,
        '--no-color',
        '--no-show-signature',
        '--max-count=21',
      ],
    },
    {
      tool: 'search_text',
      args: { query: 'function add' },
      ok: (s) => s.ok === true && s.matches?.length === 1,
      argv: [rg, '-n', '--fixed-strings', '--', 'function add', '.'],
    },
  ];
}

async function measure(call, dir, list, samples, batch) {
  const m = Object.fromEntries(
    list.flatMap((c) => [
      [c.tool, []],
      [`${c.tool}:direct`, []],
    ]),
  );
  for (const c of list) await call(c.tool, c.args); // warm-up
  while (m.git_status.length < samples) {
    for (const c of list) {
      for (let i = 0; i < batch; i++) {
        const t0 = performance.now();
        const r = spawnSync(c.argv[0], c.argv.slice(1), { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
        m[`${c.tool}:direct`].push(performance.now() - t0);
        if (r.status !== 0) throw new Error(`${c.argv.join(' ')}: ${r.stderr}`);
      }
      for (let i = 0; i < batch; i++) {
        const t0 = performance.now();
        const r = await call(c.tool, c.args);
        m[c.tool].push(performance.now() - t0);
        if (!c.ok(r.structuredContent ?? {}))
          throw new Error(`${c.tool}: ${JSON.stringify(r).slice(0, 500)}`);
      }
    }
  }
  return m;
}

/** The four rows, measured in alternating batches on a fresh server in `safe` over a fresh small repository. */
export async function directFloorRows({ rg, samples, batch }) {
  const dir = smallRepo(path.join(mkdtempSync(path.join(tmpdir(), 'wb-floors-')), 'repo'));
  const srv = await startServer(dir, { SERVICE_PERMISSION_MODE: 'safe' });
  const list = await cases(rg);
  let m;
  try {
    m = await measure(httpToolCaller(srv.url, srv.token), dir, list, samples, batch);
  } finally {
    await srv.stop();
    rmSync(path.dirname(dir), { recursive: true, force: true });
  }
  const ms = (x) => `${round(x, 2)} ms`;
  return list.map((c) => {
    const ours = median(m[c.tool]);
    const direct = median(m[`${c.tool}:direct`]);
    const program = c.tool === 'search_text' ? 'rg' : 'git';
    return {
      target: `${c.tool} ≤ direct ${program} + ${LIMIT_MS} ms (small repository: 6 files, 6 commits, 1 change)`,
      measured: round(ours - direct, 2),
      limit: LIMIT_MS,
      unit: 'ms',
      pass: ours - direct <= LIMIT_MS,
      note:
        `${ms(ours)} vs ${ms(direct)} (${round(ours / direct, 2)}×), medians of ${m[c.tool].length}; direct: ` +
        `\`${[program, ...c.argv.slice(1)].join(' ').replace(/--format=\S+/, '--format=…')}\` run on the host`,
    };
  });
}
