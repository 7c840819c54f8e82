// The `.mcpb` bundle for Claude Desktop (docs/development.md#publishing): `scripts/bundle-mcpb.mjs` (what
// `npm run bundle:mcpb` runs after the build) packs and validates it with the official CLI, and unpacked into a
// clean directory by that CLI, the command its manifest names answers initialize and tools/list over stdio, as
// Claude Desktop would start it. The CLI is installed by .ci/run into node_modules/.cache/mcpb; without it the
// test is skipped with the install command printed, and fails under CI=true.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { stdioToolsListInput } from '../helpers/rpc.js';
import { REPO_ROOT } from '../helpers/server.js';

const CLI = path.join(REPO_ROOT, 'node_modules/.cache/mcpb/node_modules/@anthropic-ai/mcpb/dist/cli/cli.js');
const pkg = JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string };
const dir = mkdtempSync(path.join(tmpdir(), 'wb-mcpb-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The manifest's `${…}` placeholders filled as Claude Desktop fills them. */
function fill(s: string, vars: Record<string, string>): string {
  return s.replace(/\$\{([^}]+)\}/g, (m, k: string) => vars[k] ?? m);
}

describe('the .mcpb bundle', () => {
  it('is built and validated by the mcpb CLI, and unpacked on a clean directory its server answers over stdio', (ctx) => {
    if (!existsSync(CLI)) {
      const why =
        'the mcpb CLI is not installed (npm install --no-save --prefix node_modules/.cache/mcpb @anthropic-ai/mcpb@2.1.2, as .ci/run does)';
      if (process.env.CI === 'true') throw new Error(`under CI=true: ${why}`);
      console.log(`SKIP .mcpb bundle: ${why}`);
      return ctx.skip();
    }
    const built = spawnSync(process.execPath, ['scripts/bundle-mcpb.mjs', '--out', dir], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
      timeout: 600_000,
    });
    expect(built.status, built.stderr).toBe(0);
    const file = path.join(dir, `workbench-mcp-${pkg.version}.mcpb`);
    expect(built.stdout.trim()).toBe(file);
    const unpacked = path.join(dir, 'unpacked');
    const unpack = spawnSync(process.execPath, [CLI, 'unpack', file, unpacked], {
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect(unpack.status, unpack.stderr).toBe(0);
    const manifest = JSON.parse(readFileSync(path.join(unpacked, 'manifest.json'), 'utf8'));
    // Nothing of the machine it was built on: no npm lock file naming the tarball's path.
    expect(readdirSync(unpacked).sort()).toEqual(['manifest.json', 'node_modules']);
    expect(existsSync(path.join(unpacked, manifest.server.entry_point))).toBe(true);

    const ws = mkdtempSync(path.join(dir, 'ws-'));
    const vars = { __dirname: unpacked, 'user_config.workspace': ws, 'user_config.permission_mode': 'safe' };
    const { command, args, env } = manifest.server.mcp_config as {
      command: string;
      args: string[];
      env: Record<string, string>;
    };
    expect(command).toBe('node');
    const input = stdioToolsListInput('claude-desktop-like');
    const run = spawnSync(
      process.execPath,
      args.map((a) => fill(a, vars)),
      {
        input,
        encoding: 'utf8',
        timeout: 120_000,
        cwd: dir,
        env: {
          PATH: process.env.PATH ?? '',
          HOME: dir,
          ...Object.fromEntries(Object.entries(env).map(([k, v]) => [k, fill(v, vars)])),
        },
      },
    );
    expect(run.status, run.stderr).toBe(0);
    const replies = run.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(replies[0].result.serverInfo.name).toBe('workbench-mcp');
    expect(replies[1].result.tools.map((t: { name: string }) => t.name)).toEqual(
      manifest.tools.map((t: { name: string }) => t.name),
    );
  }, 900_000);
});
