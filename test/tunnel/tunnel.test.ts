// `workbench-mcp tunnel` (docs/remote-access.md#the-tunnel-command; docs/design-notes.md#tests,
// docs/design-notes.md#nothing-is-downloaded) with stand-in cloudflared and ngrok programs on PATH that print
// the real output shapes and serve /quicktunnel or the agent API, and a TLS proxy on 443 behind real-shaped
// names mapped in /etc/hosts, so the printed URL really answers. Checked: the block, the generated token in
// no process's argv (nor the provider's environment), Ctrl-C and a provider or server death leaving no
// process, and `doctor` passing against the printed URL.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { READY_LINE } from '../../src/core/ready-line.js';
import { waitFor } from '../exec/exec-support.js';
import { REPO_ROOT } from '../helpers/server.js';
import type { TempWorkspace } from '../helpers/workspace.js';
import { needRoot, removeDir, tlsRequest, toolsListRequest } from '../helpers/public-names.js';
import {
  exitCode,
  runDoctor,
  startTunnel,
  survivors,
  waitTree,
  tunnelWorld,
  type RunningTunnel,
  type TunnelWorld,
} from '../helpers/tunnel-run.js';

const IP = '127.0.0.81';
const tag = randomBytes(3).toString('hex');
const CF_BOX = `wb${tag}-quiet-river-bright-field.trycloudflare.com`;
const CF_API = `wb${tag}-amber-lake-swift-owl.trycloudflare.com`;
const NGROK = `wb${tag}-203-0-113-7.ngrok-free.app`;
const HOSTS = [CF_BOX, CF_API, NGROK];

const ROOT = needRoot('tunnel tests through real-shaped public names');
let world: TunnelWorld;
let dir: string;
let ca: Buffer;
let ws: TempWorkspace;

function envFor(extra: Record<string, string>): Record<string, string> {
  // A token for each run, as before kept tokens (test/tunnel/tunnel-progress.test.ts checks the kept one).
  return world.env({ SERVICE_STATE_DIR: 'off', ...extra });
}

/** The URL and generated token of a printed bearer block. */
async function block(t: RunningTunnel): Promise<{ url: string; token: string }> {
  const url = (await t.waitOut(/^ {2}URL +(https:\/\/\S+\/mcp)$/m))[1] as string;
  const token = /^ {2}Header +Authorization: Bearer (\S+) {3}\(generated/m.exec(t.out())?.[1] as string;
  return { url, token };
}

async function toolsThrough(url: string, token: string): Promise<number> {
  const r = await tlsRequest(url, ca, toolsListRequest(token));
  expect(r.status).toBe(200);
  return (r.json.result.tools as unknown[]).length;
}

beforeAll(async () => {
  if (!ROOT) return;
  world = await tunnelWorld('wb-tunnel-', IP, HOSTS);
  ({ dir, ca, ws } = world);
}, 120_000);

afterAll(async () => {
  await world?.close();
});

describe.runIf(ROOT)('docs/remote-access.md#the-tunnel-command: cloudflared quick tunnel, bearer', () => {
  it('prints the block for https://<words>.trycloudflare.com/mcp read from the box line, and the URL answers', async () => {
    const t = startTunnel(
      ['cloudflared', '--workspace', ws.dir, '--port', '0'],
      envFor({ STANDIN_HOST: CF_BOX }),
    );
    try {
      const { url, token } = await block(t);
      expect(url).toBe(`https://${CF_BOX}/mcp`);
      expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/); // 32 random bytes, URL-safe
      const out = t.out();
      expect(out).toContain('through a cloudflared quick tunnel (a new address on every run)');
      expect(out).toContain(`  Workspace  ${ws.dir}`);
      expect(out).toMatch(
        /claude\.ai, ChatGPT +these sign in with OAuth only: run the tunnel with --auth-mode oauth/,
      );
      expect(out).toContain(
        `claude mcp add --transport http workbench ${url} --header "Authorization: Bearer ${token}"`,
      );
      expect(out).toContain(`codex mcp add workbench --url ${url} --bearer-token-env-var WORKBENCH_TOKEN`);
      expect(out).toContain(
        `{"mcpServers":{"workbench":{"url":"${url}","headers":{"Authorization":"Bearer ${token}"}}}}`,
      );
      expect(out).toContain(`{"servers":{"workbench":{"type":"http","url":"${url}"`);
      expect(out).toContain(
        `gemini mcp add -s user -t http -H "Authorization: Bearer ${token}" workbench ${url}`,
      );
      expect(out).not.toContain('QR code'); // stdout is a pipe here, not a terminal
      expect(await toolsThrough(url, token)).toBeGreaterThan(0);

      // The credential is in no process's argv; the provider does not even get it in its environment.
      const tree = await waitTree(t.proc.pid as number, [
        /main\.js tunnel cloudflared/,
        /main\.js .*--host 127\.0\.0\.1 --port 0/,
        /cloudflared\.mjs tunnel --no-autoupdate --url http:\/\/127\.0\.0\.1:\d+ --metrics/,
      ]);
      for (const p of tree) expect(p.cmdline).not.toContain(token);
      const provider = tree.find((p) => p.cmdline.includes('cloudflared.mjs'));
      expect(provider?.environ).not.toContain(token);
      expect(provider?.environ).not.toMatch(/(^|\0)SERVICE_/);

      // Ctrl-C stops both, exit 0, nothing left running.
      t.proc.kill('SIGINT');
      expect(await exitCode(t)).toBe(0);
      expect(t.err()).toContain('SIGINT: stopping cloudflared and the server');
      expect(await waitFor(() => survivors(tree).length === 0)).toBe(true);
    } finally {
      t.proc.kill('SIGKILL');
    }
  });

  it('reads the name from the metrics /quicktunnel when no box is printed; a provider crash stops the server (exit 5)', async () => {
    const crash = path.join(dir, 'crash-cloudflared');
    const t = startTunnel(
      ['cloudflared', '--workspace', ws.dir, '--port', '0'],
      envFor({ STANDIN_HOST: CF_API, STANDIN_QUIET_URL: '1', STANDIN_CRASH_FILE: crash }),
    );
    try {
      const { url, token } = await block(t);
      expect(url).toBe(`https://${CF_API}/mcp`);
      await toolsThrough(url, token);
      const tree = await waitTree(t.proc.pid as number, [/main\.js .*--port 0/, /cloudflared\.mjs/]);
      writeFileSync(crash, '');
      expect(await exitCode(t)).toBe(5);
      expect(t.err()).toContain('cloudflared exited with code 1; stopping the server. Its last output:');
      expect(t.err()).toContain('connection with edge closed');
      expect(await waitFor(() => survivors(tree).length === 0)).toBe(true);
    } finally {
      t.proc.kill('SIGKILL');
    }
  });
});

describe.runIf(ROOT)(
  'tunnel with a kept token (README "Connecting clients": a restart needs no new settings)',
  () => {
    it('shown when the tunnel makes it; the next run names it by `token show` (in snippets as $(…)), and it still works', async () => {
      const kept = { SERVICE_STATE_DIR: path.join(dir, 'kept-state') };
      const first = startTunnel(
        ['cloudflared', '--workspace', ws.dir, '--port', '0'],
        envFor({ STANDIN_HOST: CF_BOX, ...kept }),
      );
      let token: string;
      try {
        await first.waitOut(/^ {2}URL +https:/m);
        const m =
          /^ {2}Header +Authorization: Bearer (\S+) {3}\(generated and kept for this workspace; later runs reuse it/m.exec(
            first.out(),
          );
        expect(m, first.out()).not.toBeNull();
        token = m?.[1] as string;
        expect(await toolsThrough(`https://${CF_BOX}/mcp`, token)).toBeGreaterThan(0);
        first.proc.kill('SIGINT');
        expect(await exitCode(first)).toBe(0);
      } finally {
        first.proc.kill('SIGKILL');
      }
      const second = startTunnel(
        ['cloudflared', '--workspace', ws.dir, '--port', '0'],
        envFor({ STANDIN_HOST: CF_BOX, ...kept }),
      );
      try {
        const url = (await second.waitOut(/^ {2}URL +(https:\/\/\S+\/mcp)$/m))[1] as string;
        const out = second.out();
        expect(out + second.err()).not.toContain(token);
        const show =
          /^ {2}Header +Authorization: Bearer <the token kept for this workspace; show it: (.+)>$/m.exec(
            out,
          )?.[1];
        expect(show, out).toMatch(/ token show --workspace /);
        expect(out).toContain(
          `claude mcp add --transport http workbench ${url} --header "Authorization: Bearer $(${show})"`,
        );
        expect(out).toContain(`export WORKBENCH_TOKEN="$(${show})"; codex mcp add workbench`);
        // The printed command prints the token the server (started by this tunnel) accepts.
        const shown = spawnSync('sh', ['-c', show as string], { env: envFor(kept), encoding: 'utf8' });
        expect(shown.stdout.trim()).toBe(token);
        expect(await toolsThrough(url, token)).toBeGreaterThan(0);
        second.proc.kill('SIGINT');
        expect(await exitCode(second)).toBe(0);
      } finally {
        second.proc.kill('SIGKILL');
      }
    });
  },
);

describe.runIf(ROOT)('docs/remote-access.md#the-tunnel-command: ngrok, bearer, checked by doctor', () => {
  it('reads "started tunnel" from the JSON log; doctor passes against the printed URL; a server death stops ngrok (exit 4)', async () => {
    const t = startTunnel(['ngrok', '--workspace', ws.dir, '--port', '0'], envFor({ STANDIN_HOST: NGROK }));
    try {
      const { url, token } = await block(t);
      expect(url).toBe(`https://${NGROK}/mcp`);
      expect(t.out()).toContain('through ngrok (the address may change between runs');
      const port = (await t.waitOut(READY_LINE, 'err'))[3] as string;
      // The doctor line names the program as it runs here (src/cli/self.ts), with the workspace it serves.
      expect(t.out()).toMatch(
        new RegExp(
          `Check it any time: SERVICE_AUTH_TOKEN='${token}' (node \\S+/dist/cli/main\\.js|workbench-mcp) doctor ${url.replace(/[.]/g, '\\.')} --port ${port} --workspace ${ws.dir}`,
        ),
      );
      const tree = await waitTree(t.proc.pid as number, [
        /main\.js .*--port 0/,
        /ngrok\.mjs http http:\/\/127\.0\.0\.1:\d+ --log stdout --log-format json$/,
      ]);
      for (const p of tree) expect(p.cmdline).not.toContain(token);

      const doctor = await runDoctor([url, '--port', port], {
        PATH: process.env.PATH ?? '',
        NODE_EXTRA_CA_CERTS: world.caFile,
        SERVICE_AUTH_TOKEN: token,
      });
      expect(doctor.out).toMatch(/^pass +public endpoint: https:/m);
      expect(doctor.out).toMatch(/^pass +authenticated tools\/list \(2026-07-28\)/m);
      expect(doctor.out).toContain('All checks passed.');
      expect(doctor.code).toBe(0);

      const server = tree.find(
        (p) => /main\.js .*--port 0/.test(p.cmdline) && !p.cmdline.includes(' tunnel '),
      );
      process.kill(server?.pid as number, 'SIGKILL');
      expect(await exitCode(t)).toBe(4);
      expect(t.err()).toContain('the server was killed by SIGKILL; stopping ngrok');
      expect(await waitFor(() => survivors(tree).length === 0)).toBe(true);
    } finally {
      t.proc.kill('SIGKILL');
    }
  });
});

describe('tunnel start-up refusals (nothing is downloaded: docs/design-notes.md#nothing-is-downloaded)', () => {
  const run = async (args: string[], pathVar: string) => {
    const t = startTunnel(args, { PATH: pathVar, HOME: tmpdir() });
    return { code: await exitCode(t), err: t.err(), out: t.out() };
  };

  it('a provider CLI missing from PATH: one line saying how to install it, exit 3', async () => {
    const empty = mkdtempSync(path.join(tmpdir(), 'wb-empty-path-'));
    try {
      for (const [p, how] of [
        ['cloudflared', /cloudflared is not on PATH; install it from https:\/\/developers\.cloudflare\.com/],
        ['ngrok', /ngrok is not on PATH; install it from https:\/\/ngrok\.com\/download/],
        [
          'devtunnel',
          /devtunnel is not on PATH; install it with curl -sL https:\/\/aka\.ms\/DevTunnelCliInstall/,
        ],
      ] as const) {
        const r = await run([p, '--workspace', tmpdir()], empty);
        expect(r.code).toBe(3);
        expect(r.err.trim().split('\n')).toHaveLength(1);
        expect(r.err).toMatch(how);
      }
    } finally {
      removeDir(empty);
    }
  });

  it('scripts/tunnel-{cloudflared,ngrok,devtunnel}.sh are thin wrappers over the same command (docs/remote-access.md#the-tunnel-command)', () => {
    for (const p of ['cloudflared', 'ngrok', 'devtunnel']) {
      const file = path.join(REPO_ROOT, 'scripts', `tunnel-${p}.sh`);
      expect(statSync(file).mode & 0o111).not.toBe(0);
      expect(spawnSync('sh', ['-n', file]).status).toBe(0);
      expect(readFileSync(file, 'utf8')).toContain(`exec node "$repo/dist/cli/main.js" tunnel ${p} "$@"`);
    }
  });

  it('bad options exit 2 before anything starts: unknown provider, noauth, devtunnel on port 0, --name with cloudflared', async () => {
    const p = process.env.PATH ?? '';
    expect((await run(['localtunnel'], p)).err).toContain('unknown tunnel provider "localtunnel"');
    const noauth = await run(['cloudflared', '--auth-mode', 'noauth'], p);
    expect(noauth.code).toBe(2);
    expect(noauth.err).toContain('noauth would publish the workspace to anyone');
    const dev = await run(['devtunnel', '--port', '0'], p);
    expect(dev.code).toBe(2);
    expect(dev.err).toContain('devtunnel needs a fixed port');
    const named = await run(['cloudflared', '--name', 'x.example.com'], p);
    expect(named.code).toBe(2);
    expect(named.err).toContain('--name is for ngrok reserved domains and devtunnel named tunnels');
    const help = await run(['--help'], p);
    expect(help.code).toBe(0);
    expect(help.out).toContain('Exit codes: 0 stopped by Ctrl-C, 2 bad options, 3 provider CLI missing');
  });
});
