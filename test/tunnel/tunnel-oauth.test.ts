// `workbench-mcp tunnel … --auth-mode oauth` and pinning the public origin (
// docs/remote-access.md#the-tunnel-command; docs/design-notes.md#tests): an ngrok reserved domain is known
// before the server starts and pinned as SERVICE_SERVER_URL (its URL read here from the agent API);
// devtunnel's relay rewrites Host to localhost, so the origin it prints is pinned, and the OAuth metadata
// seen through the tunnel names the public origin. The generated password is in no argv, and doctor completes
// the whole sign-in through the tunnel.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { READY_LINE } from '../../src/core/ready-line.js';
import { waitFor } from '../exec/exec-support.js';
import { freePort } from '../helpers/server.js';
import type { TempWorkspace } from '../helpers/workspace.js';
import { needRoot, tlsRequest } from '../helpers/public-names.js';
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

const IP = '127.0.0.82';
const tag = randomBytes(3).toString('hex');
const RESERVED = `wb${tag}-reserved.ngrok-free.app`;
const ROOT = needRoot('OAuth tunnel tests through real-shaped public names');

let world: TunnelWorld;
let ca: Buffer;
let ws: TempWorkspace;
let devPort = 0;
let namedPort = 0;
let devHost = '';
let namedHost = '';

const envFor = (extra: Record<string, string>) => world.env(extra);

async function oauthBlock(t: RunningTunnel): Promise<{ url: string; password: string }> {
  const url = (await t.waitOut(/^ {2}URL +(https:\/\/\S+\/mcp)$/m))[1] as string;
  const password = /^ {2}Password +([a-z2-9]{5}(?:-[a-z2-9]{5}){3}) {3}\(generated/m.exec(
    t.out(),
  )?.[1] as string;
  expect(password).toBeTruthy();
  return { url, password };
}

async function stop(t: RunningTunnel, tree: Awaited<ReturnType<typeof waitTree>>): Promise<void> {
  t.proc.kill('SIGINT');
  expect(await exitCode(t)).toBe(0);
  expect(await waitFor(() => survivors(tree).length === 0)).toBe(true);
}

beforeAll(async () => {
  if (!ROOT) return;
  devPort = await freePort();
  namedPort = await freePort();
  devHost = `wb${tag}q-${devPort}.euw.devtunnels.ms`;
  namedHost = `wb${tag}n-${namedPort}.usw2.devtunnels.ms`;
  world = await tunnelWorld('wb-tunnel-oauth-', IP, [RESERVED, devHost, namedHost]);
  ({ ca, ws } = world);
}, 120_000);

afterAll(async () => {
  await world?.close();
});

describe.runIf(ROOT)(
  'the tunnel command + the OAuth base URL (docs/oauth.md#endpoints): ngrok --name <reserved domain> --auth-mode oauth',
  () => {
    it('pins SERVICE_SERVER_URL before start, reads the URL from the agent API, prints the password and OAuth settings', async () => {
      const t = startTunnel(
        ['ngrok', '--name', RESERVED, '--auth-mode', 'oauth', '--workspace', ws.dir, '--port', '0'],
        envFor({ STANDIN_QUIET_URL: '1' }),
      );
      try {
        const { url, password } = await oauthBlock(t);
        expect(url).toBe(`https://${RESERVED}/mcp`);
        const out = t.out();
        expect(out).toContain('through ngrok on your reserved domain (the same address on every run)');
        expect(out).toMatch(/claude\.ai +Settings → Connectors → Add custom connector/);
        expect(out).toContain(`codex mcp add workbench --url ${url} && codex mcp login workbench`);
        expect(out).toContain(`{"mcpServers":{"workbench":{"url":"${url}"}}}`);
        expect(out).not.toContain('Authorization: Bearer');
        // Pinned: even asked directly on loopback, the server names the public origin.
        const port = (await t.waitOut(READY_LINE, 'err'))[3];
        const local = await fetch(`http://127.0.0.1:${port}/.well-known/oauth-authorization-server`);
        expect(((await local.json()) as { issuer: string }).issuer).toBe(`https://${RESERVED}`);
        const tree = await waitTree(t.proc.pid as number, [
          /main\.js .*--host 127\.0\.0\.1/,
          new RegExp(`ngrok\\.mjs http http://127\\.0\\.0\\.1:${port} .* --url https://${RESERVED}$`),
        ]);
        for (const p of tree) expect(p.cmdline).not.toContain(password);
        expect(tree.find((p) => p.cmdline.includes('ngrok.mjs'))?.environ).not.toContain(password);
        await stop(t, tree);
      } finally {
        t.proc.kill('SIGKILL');
      }
    });
  },
);

describe.runIf(ROOT)(
  'the tunnel command + the OAuth base URL (docs/oauth.md#endpoints): devtunnel --auth-mode oauth (the relay rewrites Host)',
  () => {
    it('temporary tunnel: the printed origin is pinned, metadata through it names https://<id>-<port>.<region>.devtunnels.ms, doctor signs in', async () => {
      const t = startTunnel(
        ['devtunnel', '--auth-mode', 'oauth', '--workspace', ws.dir, '--port', String(devPort)],
        envFor({ STANDIN_HOST: devHost }),
      );
      try {
        const { url, password } = await oauthBlock(t);
        expect(url).toBe(`https://${devHost}/mcp`);
        expect(t.out()).toContain('a temporary dev tunnel (deleted when this stops');
        const as = await tlsRequest(`https://${devHost}/.well-known/oauth-authorization-server`, ca);
        expect(as.json.issuer).toBe(`https://${devHost}`);
        expect(as.json.token_endpoint).toBe(`https://${devHost}/oauth/token`);
        const tree = await waitTree(t.proc.pid as number, [
          new RegExp(`main\\.js .*--host 127\\.0\\.0\\.1 --port ${devPort}`),
          new RegExp(`devtunnel\\.mjs host -p ${devPort} --allow-anonymous`),
        ]);
        for (const p of tree) expect(p.cmdline).not.toContain(password);

        const doctor = await runDoctor([url, '--port', String(devPort)], {
          PATH: process.env.PATH ?? '',
          NODE_EXTRA_CA_CERTS: world.caFile,
          SERVICE_OAUTH_PASSWORD: password,
        });
        expect(doctor.out).toMatch(/^pass +authorization-server metadata: issuer https:\/\/wb/m);
        expect(doctor.out).toMatch(/^pass +OAuth sign-in: /m);
        expect(doctor.out).toMatch(/^pass +authenticated tools\/list \(handshake era\)/m);
        expect(doctor.code).toBe(0);
        await stop(t, tree);
      } finally {
        t.proc.kill('SIGKILL');
      }
    });

    it('named tunnel (--name): hosted by id, a stable address; a tunnel without our port ends with exit 5', async () => {
      const t = startTunnel(
        [
          'devtunnel',
          '--name',
          `wb${tag}n`,
          '--auth-mode',
          'oauth',
          '--workspace',
          ws.dir,
          '--port',
          String(namedPort),
        ],
        envFor({ STANDIN_HOST: namedHost, STANDIN_DEVTUNNEL_PORT: String(namedPort) }),
      );
      try {
        const { url } = await oauthBlock(t);
        expect(url).toBe(`https://${namedHost}/mcp`);
        expect(t.out()).toContain(`the dev tunnel wb${tag}n (the same address on every run)`);
        const tree = await waitTree(t.proc.pid as number, [new RegExp(`devtunnel\\.mjs host wb${tag}n$`)]);
        await stop(t, tree);
      } finally {
        t.proc.kill('SIGKILL');
      }
      const other = String(namedPort === 8765 ? 8766 : 8765);
      const wrong = startTunnel(
        ['devtunnel', '--name', `wb${tag}n`, '--workspace', ws.dir, '--port', String(namedPort)],
        envFor({ STANDIN_HOST: `wb${tag}n-${other}.usw2.devtunnels.ms`, STANDIN_DEVTUNNEL_PORT: other }),
      );
      try {
        expect(await exitCode(wrong)).toBe(5);
        expect(wrong.err()).toContain(`the dev tunnel forwards port ${other}, not ${namedPort}`);
      } finally {
        wrong.proc.kill('SIGKILL');
      }
    });
  },
);
