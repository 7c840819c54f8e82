// Shared pieces of the project's benchmark scripts: the benchmark workspace, starting the built server,
// and writing results (JSON + a markdown table, no absolute machine paths).
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const BENCH_DIR = path.dirname(fileURLToPath(import.meta.url));
export const REPO = path.resolve(BENCH_DIR, '..');
export const RESULTS = path.join(BENCH_DIR, 'results');

/** The ~9 k-file benchmark repository, built once from npm tarballs into bench/.cache/workspace. */
export function benchWorkspace() {
  const dir = path.join(BENCH_DIR, '.cache', 'workspace');
  if (!existsSync(path.join(dir, 'mcp-bench', 'large.d.ts'))) {
    mkdirSync(path.dirname(dir), { recursive: true });
    const r = spawnSync('bash', [path.join(BENCH_DIR, 'make-workspace.sh'), dir], { stdio: 'inherit' });
    if (r.status !== 0) throw new Error('make-workspace.sh failed');
  }
  return dir;
}

/**
 * Start the built bin on a free port, launched as an installed bin is: the file itself through its shebang (and
 * the V8 flags the shebang carries). Resolves {url, base, host, port, pid, token, stop}.
 */
export function startServer(workspace, env = {}, bin = path.join(REPO, 'dist/cli/main.js')) {
  const token = randomBytes(24).toString('base64url');
  const child = spawn(bin, ['--workspace', workspace, '--port', '0'], {
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      SERVICE_AUTH_TOKEN: token,
      SERVICE_LOG_LEVEL: 'warn',
      ...env,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    let err = '';
    const t = setTimeout(() => reject(new Error('server did not start: ' + err)), 20000);
    child.stderr.on('data', (c) => {
      err += c;
      const m = /listening on (http:\/\/([^\s:]+|\[[^\]]+\]):(\d+))\/mcp/.exec(err);
      if (m) {
        clearTimeout(t);
        const stop = () =>
          new Promise((r) =>
            child.exitCode !== null ? r() : (child.once('exit', r), child.kill('SIGTERM')),
          );
        resolve({
          base: m[1],
          url: `${m[1]}/mcp`,
          host: m[2].replace(/^\[|\]$/g, ''),
          port: Number(m[3]),
          pid: child.pid,
          token,
          stop,
        });
      }
    });
    child.on('exit', (code) => reject(new Error(`server exited ${code}: ${err}`)));
  });
}

export function ensureBuilt() {
  if (!existsSync(path.join(REPO, 'dist/cli/main.js'))) {
    const r = spawnSync('npm', ['run', 'build', '--silent'], { cwd: REPO, stdio: 'inherit' });
    if (r.status !== 0) throw new Error('build failed');
  }
}

export const round = (x, d = 3) => (x == null || Number.isNaN(x) ? null : Math.round(x * 10 ** d) / 10 ** d);

/** rows: [{target, measured, limit, unit, pass, note}] */
export function writeResults(name, title, rows, extra = {}) {
  mkdirSync(RESULTS, { recursive: true });
  const env = {
    node: process.version,
    cpus: globalThis.navigator?.hardwareConcurrency ?? null,
    date: new Date().toISOString(),
  };
  writeFileSync(
    path.join(RESULTS, `${name}.json`),
    JSON.stringify({ title, environment: env, targets: rows, ...extra }, null, 2) + '\n',
  );
  const md = [
    `# ${title}`,
    '',
    `Measured ${env.date.slice(0, 10)} on Node ${env.node}. Ratios compare numbers taken in the same run.`,
    '',
    '| target | measured | limit | result | note |',
    '|---|---|---|---|---|',
    ...rows.map(
      (r) =>
        `| ${r.target} | ${r.measured ?? 'n/a'} ${r.unit ?? ''} | ${r.op ?? '≤'} ${r.limit} ${r.unit ?? ''} | ${r.pass ? 'pass' : 'MISS'} | ${r.note ?? ''} |`,
    ),
    '',
  ].join('\n');
  writeFileSync(path.join(RESULTS, `${name}.md`), md);
  process.stdout.write('\n' + md);
}
