// Builds the `.mcpb` bundle for Claude Desktop (docs/development.md#publishing): the package as `npm pack` makes
// it, installed with its runtime dependencies only, beside deploy/mcpb/manifest.json, validated and packed by
// the official CLI, `@anthropic-ai/mcpb`. The CLI is never a dependency: .ci/run installs it, pinned, into
// node_modules/.cache/mcpb (the command is printed when it is missing). Run after `npm run build`:
// `npm run bundle:mcpb` (writes workbench-mcp-<version>.mcpb into the checkout, or `--out DIR`).
// The bundle carries the native parts built here (node-pty's prebuilt binary for this platform, ripgrep,
// dist/native), so build it on the platform it is for; elsewhere those parts degrade as docs/development.md says.
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const MCPB_VERSION = '2.1.2';
const CLI = path.join(repo, 'node_modules/.cache/mcpb/node_modules/@anthropic-ai/mcpb/dist/cli/cli.js');

const { values } = parseArgs({ options: { out: { type: 'string', default: repo } } });
if (!existsSync(CLI)) {
  process.stderr.write(
    `bundle:mcpb: the mcpb CLI is not installed; install it (as .ci/run does) with\n` +
      `  npm install --no-save --prefix node_modules/.cache/mcpb @anthropic-ai/mcpb@${MCPB_VERSION}\n`,
  );
  process.exit(1);
}

const pkg = JSON.parse(readFileSync(path.join(repo, 'package.json'), 'utf8'));
const run = (cmd, args, cwd = repo) =>
  execFileSync(cmd, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
const work = mkdtempSync(path.join(tmpdir(), 'wb-mcpb-'));
try {
  run('npm', ['pack', '--silent', '--pack-destination', work]);
  const tgz = readdirSync(work).find((f) => f.endsWith('.tgz'));
  const stage = path.join(work, 'bundle');
  run('npm', [
    'install',
    '--omit=dev',
    '--prefer-offline',
    '--no-audit',
    '--no-fund',
    '--prefix',
    stage,
    path.join(work, tgz),
  ]);
  // What npm wrote about this install names the tarball's path on this machine: not part of the bundle.
  for (const f of ['package.json', 'package-lock.json', 'node_modules/.package-lock.json'])
    rmSync(path.join(stage, f), { force: true });
  copyFileSync(path.join(repo, 'deploy/mcpb/manifest.json'), path.join(stage, 'manifest.json'));
  run(process.execPath, [CLI, 'validate', path.join(stage, 'manifest.json')]);
  const out = path.join(path.resolve(values.out), `workbench-mcp-${pkg.version}.mcpb`);
  run(process.execPath, [CLI, 'pack', stage, out]);
  process.stdout.write(`${out}\n`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
