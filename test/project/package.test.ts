// First impression: `npm pack` yields a package that installs with `--omit=dev` (no TypeScript, no
// test tools) and runs — what `npx workbench-mcp` does once it is published (and does here, from the tarball). The packed tarball is installed
// into a temporary prefix (runtime dependencies come from the npm registry) and answers tools/list over stdio.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { needBwrap } from '../exec/exec-support.js';
import { callTool, stdioToolsListInput } from '../helpers/rpc.js';
import { REPO_ROOT, startServer } from '../helpers/server.js';

const dir = mkdtempSync(path.join(tmpdir(), 'wb-pack-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the packed package (npm pack, install --omit=dev, run)', () => {
  it('installs without dev dependencies and answers tools/list with the 20 tools', () => {
    const pack = spawnSync('npm', ['pack', '--silent', '--pack-destination', dir], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
      timeout: 240_000,
    });
    expect(pack.status, pack.stderr).toBe(0);
    const tgz = readdirSync(dir).find((f) => f.endsWith('.tgz')) as string;
    expect(tgz).toMatch(/^workbench-mcp-.*\.tgz$/);
    const prefix = path.join(dir, 'prefix');
    const install = spawnSync(
      'npm',
      [
        'install',
        '--omit=dev',
        '--prefer-offline',
        '--no-audit',
        '--no-fund',
        '--prefix',
        prefix,
        path.join(dir, tgz),
      ],
      { encoding: 'utf8', timeout: 240_000 },
    );
    expect(install.status, install.stderr).toBe(0);
    const installed = readdirSync(path.join(prefix, 'node_modules'));
    for (const devOnly of ['typescript', 'vitest', 'eslint', '@modelcontextprotocol'])
      expect(installed).not.toContain(devOnly);
    const bin = path.join(prefix, 'node_modules/.bin/workbench-mcp');
    const ws = mkdtempSync(path.join(dir, 'ws-'));
    const run = spawnSync(bin, ['--stdio', '--workspace', ws], {
      input: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }) + '\n',
      encoding: 'utf8',
      timeout: 120_000,
      env: { PATH: process.env.PATH ?? '', HOME: dir },
    });
    expect(run.status, run.stderr).toBe(0);
    const reply = JSON.parse(run.stdout.split('\n')[0] as string);
    expect(reply.result.tools).toHaveLength(20);
  }, 600_000);

  // How a client configured from server.json (runtimeHint npx) or a user starts it: `npx -y <package>`, here the
  // packed tarball, from a directory that has nothing of this checkout.
  it('runs as `npx -y <tarball>`: --help, and a stdio server answering initialize and tools/list', () => {
    const tgz = path.join(dir, readdirSync(dir).find((f) => f.endsWith('.tgz')) as string);
    const clean = mkdtempSync(path.join(dir, 'npx-'));
    const npx = (args: string[], input?: string) =>
      // Named relative to the directory, as a user types it (npx runs a bare absolute path as a command).
      spawnSync('npx', ['-y', path.relative(clean, tgz), ...args], {
        cwd: clean,
        input,
        encoding: 'utf8',
        timeout: 240_000,
        // The dependencies are in npm's cache already (this checkout installed them): no registry round trips.
        env: {
          PATH: process.env.PATH ?? '',
          HOME: process.env.HOME ?? dir,
          npm_config_prefer_offline: 'true',
        },
      });
    const help = npx(['--help']);
    expect(help.status, help.stderr).toBe(0);
    expect(help.stdout).toMatch(/--stdio/);
    const input = stdioToolsListInput('npx');
    const run = npx(['--stdio', '--workspace', clean], input);
    expect(run.status, run.stderr).toBe(0);
    const replies = run.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(replies[0].result.serverInfo.name).toBe('workbench-mcp');
    expect(replies[1].result.tools).toHaveLength(20);
  }, 600_000);

  // Installed under the temporary directory, which the sandbox makes an empty read-only /tmp when the workspace
  // or the runtime directory lies under it: commands still run, each in a sandbox of its own.
  it('installed under /tmp, sandboxed commands run, each in a PID namespace of its own', async () => {
    if (!needBwrap('the installed package in bubblewrap')) return;
    const bin = path.join(dir, 'prefix', 'node_modules/.bin/workbench-mcp');
    const ws = mkdtempSync(path.join(dir, 'ws-'));
    const srv = await startServer({ workspace: ws, bin, env: { SERVICE_SANDBOX: 'bwrap' } });
    try {
      const ns = async () =>
        (await callTool(srv.url, 'exec_command', { cmd: 'readlink /proc/self/ns/pid' })).structuredContent;
      const first = await ns();
      expect(first.status, JSON.stringify(first)).toBe('exited');
      const second = await ns();
      expect(second.status, JSON.stringify(second)).toBe('exited');
      expect(second.stdout).not.toBe(first.stdout);
    } finally {
      await srv.stop();
    }
  }, 300_000);
});
