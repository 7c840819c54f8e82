// `trusted` in a network namespace of its own, and grants that end with their command
// (docs/security-model.md#network-per-mode), run twice like test/confinement/confinement-commands-suite.ts: with the server
// as root and as nobody. A `trusted` command reaches a test HTTPS server under a name on no allow-list (the
// test-only WB_TEST_RESOLVE maps it to 127.0.0.1, and SERVICE_NETWORK_ALLOW_PRIVATE lets that one name through),
// but not an abstract unix socket the test holds open on the host, nor a host loopback port (directly or
// through the proxy), nor an allowed name that resolves to loopback without the setting. In `safe`, a grant
// through the client lets one command through once; a socket that command tunnelled through the proxy and
// passed (SCM_RIGHTS, over a unix socket in the workspace) to a later command carries nothing once it ended.
// Needs bubblewrap and the built bridge: skipped with the reason when absent, a failure under CI=true.
import { randomBytes } from 'node:crypto';
import { readlinkSync, rmSync, writeFileSync } from 'node:fs';
import net, { type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtProgram } from '../../src/process/native.js';
import { needBuilt } from '../helpers/native.js';
import { call, pollUntil } from '../exec/exec-support.js';
import {
  canRunAs,
  descendantsOf,
  descriptorLinks,
  ownedDir,
  startBinAs,
  type BinServer,
  type RunAs,
} from '../helpers/hostile-bin.js';
import { bearer, ELICIT_META, META, request, send, until } from '../helpers/raw-http.js';
import { startStandinRegistry, type StandinRegistry } from '../helpers/standin-registry.js';
import { fdReceiverPy } from './fd-receiver.js';

/* eslint-disable @typescript-eslint/no-explicit-any */

/** Receives one descriptor on pass.sock, waits for the file `go`, then tries to talk through it. */
const RECEIVER = fdReceiverPy({ sock: 'pass.sock', go: 'go', payload: 'b"after-end\\n"' });

/** Tunnels to granted.test through the proxy with this command's credential, checks it, passes it on. */
const SENDER = `
import array, base64, os, socket, sys, urllib.parse
port = sys.argv[1]
u = urllib.parse.urlparse(os.environ["HTTP_PROXY"])
s = socket.create_connection((u.hostname, u.port))
auth = base64.b64encode(f"{u.username}:{u.password}".encode()).decode()
s.sendall(f"CONNECT granted.test:{port} HTTP/1.1\\r\\nHost: granted.test:{port}\\r\\nProxy-Authorization: Basic {auth}\\r\\n\\r\\n".encode())
head = b""
while b"\\r\\n\\r\\n" not in head:
    d = s.recv(1)
    if not d: break
    head += d
print(head.split(b"\\r\\n")[0].decode(), flush=True)
if b" 200 " not in head.split(b"\\r\\n")[0]: sys.exit(3)
s.sendall(b"during\\n")
print("echo", repr(s.recv(100)), flush=True)
if os.path.exists("pass.sock"):
    c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); c.connect("pass.sock")
    c.sendmsg([b"x"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [s.fileno()]))])
    c.close()
    print("passed", flush=True)
`;

export function trustedNetSuite(as: RunAs): void {
  const what = 'the trusted-network and grant tests';
  const d = canRunAs(as, what) && needBuilt(['wb-netbridge'], what) ? describe : describe.skip;
  d(`trusted has a network namespace of its own; grants end with their command (server as ${as})`, () => {
    const tag = randomBytes(4).toString('hex');
    let ws: string;
    let rt: string;
    let reg: StandinRegistry;
    let trusted: BinServer;
    let safe: BinServer;
    const hostConns = { abstract: 0, loopback: 0 };
    let abstract: net.Server;
    let loopback: net.Server;
    let echo: net.Server;
    let echoed = '';

    beforeAll(async () => {
      ws = ownedDir(tmpdir(), 'wb-nettr-ws-', as);
      rt = ownedDir(tmpdir(), 'wb-nettr-rt-', as);
      writeFileSync(path.join(ws, 'recv.py'), RECEIVER);
      writeFileSync(path.join(ws, 'send.py'), SENDER);
      reg = await startStandinRegistry(ws, { extraNames: ['site.test', 'other.test'] });
      abstract = net.createServer((s) => {
        hostConns.abstract++;
        s.destroy();
      });
      await new Promise<void>((r) => abstract.listen({ path: `\0wb-abstract-${tag}` }, () => r()));
      loopback = net.createServer((s) => {
        hostConns.loopback++;
        s.destroy();
      });
      await new Promise<void>((r) => loopback.listen(0, '127.0.0.1', () => r()));
      echo = net.createServer((s) => s.on('data', (b) => (echoed += b.toString()) && s.write(b)));
      await new Promise<void>((r) => echo.listen(0, '127.0.0.1', () => r()));
      const resolve = 'site.test=127.0.0.1,other.test=127.0.0.1,granted.test=127.0.0.1';
      trusted = await startBinAs({
        workspace: ws,
        runtimeRoot: rt,
        as,
        env: {
          SERVICE_PERMISSION_MODE: 'trusted',
          WB_TEST_RESOLVE: resolve,
          SERVICE_NETWORK_ALLOW_PRIVATE: 'site.test',
        },
      });
      safe = await startBinAs({
        workspace: ws,
        runtimeRoot: rt,
        as,
        env: { WB_TEST_RESOLVE: resolve, SERVICE_NETWORK_ALLOW_PRIVATE: 'granted.test' },
      });
    });
    afterAll(async () => {
      await Promise.all([trusted?.stop(), safe?.stop(), reg?.close()]);
      for (const s of [abstract, loopback, echo]) s?.close();
      for (const dir of [ws, rt]) if (dir) rmSync(dir, { recursive: true, force: true });
    });

    const run = (s: BinServer, cmd: string) =>
      call(s.url, 'exec_command', { cmd, yield_time_ms: 30_000, timeout_ms: 300_000 });

    it('server_info and check_exec_environment say trusted reaches any public host through the proxy', async () => {
      const c = await call(trusted.url, 'check_exec_environment');
      expect(c.sc.sandbox).toMatchObject({ in_use: 'bwrap', network: 'proxy' });
      expect(c.sc.policy.network).toMatch(/any public host.*own network namespace/);
      expect(c.sc.environment.set.HTTPS_PROXY).toMatch(/^http:\/\/wb:.*@127\.0\.0\.1:3128$/);
      const i = await call(trusted.url, 'server_info');
      expect(i.sc.sandbox.reason).toMatch(/any public host.*own network namespace/);
    });

    it('a trusted command reaches a test HTTPS server under a name on no allow-list, from its own namespace', async () => {
      const r = await run(
        trusted,
        `curl -sS -o /dev/null -w "%{http_code}" --cacert standin-ca.pem https://site.test:${reg.port}/small/x; echo; readlink /proc/self/ns/net`,
      );
      const [code, ns] = String(r.sc.stdout).trim().split('\n');
      expect(code, r.sc.stderr).toBe('200');
      expect(reg.seen).toContain('GET site.test /small/x');
      expect(ns).toMatch(/^net:\[\d+\]$/);
      expect(ns).not.toBe(readlinkSync('/proc/self/ns/net'));
      expect(r.sc.blocked).toBeUndefined();
    });

    it('an abstract unix socket the test holds open on the host is out of reach', async () => {
      // The listener works from the host's namespace (so the command's failure is the sandbox's doing).
      await new Promise<void>((res, rej) =>
        net.connect({ path: `\0wb-abstract-${tag}` }, res).once('error', rej),
      );
      await new Promise<void>((res) =>
        hostConns.abstract > 0 ? res() : abstract.once('connection', () => res()),
      );
      const before = hostConns.abstract;
      const py = `import socket\ns = socket.socket(socket.AF_UNIX)\ntry:\n  s.connect("\\0wb-abstract-${tag}"); print("connected")\nexcept OSError as e: print("failed", e.errno)`;
      const r = await run(trusted, `python3 -c '${py}'`);
      expect(r.sc.stdout).toMatch(/^failed \d+/);
      expect(hostConns.abstract).toBe(before);
    });

    it('a host loopback port is out of reach, directly and through the proxy; loopback names need the setting', async () => {
      const port = (loopback.address() as AddressInfo).port;
      const py = `import socket\ns = socket.socket(); s.settimeout(10)\ntry:\n  s.connect(("127.0.0.1", ${port})); print("connected")\nexcept OSError as e: print("failed", e.errno)`;
      const direct = await run(trusted, `python3 -c '${py}'`);
      expect(direct.sc.stdout).toMatch(/^failed \d+/);
      const viaProxy = await run(
        trusted,
        `curl -sS --noproxy "" --proxy "$HTTP_PROXY" http://127.0.0.1:${port}/; echo "curl=$?"`,
      );
      expect(viaProxy.sc.stdout).toContain('loopback, private and metadata addresses are refused');
      expect(viaProxy.sc.blocked).toMatchObject({ why: 'resolves to loopback address 127.0.0.1' });
      const other = await run(
        trusted,
        `curl -sS --cacert standin-ca.pem https://other.test:${reg.port}/small/y; echo "curl=$?"`,
      );
      expect(other.sc.stdout).toContain('curl=56');
      expect(other.sc.blocked).toMatchObject({ what: `other.test:${reg.port}` });
      expect(reg.seen).not.toContain('GET other.test /small/y');
      expect(hostConns.loopback).toBe(0);
    });

    it("the server's relay accepts the command's connections itself: the sandbox's listener is handed over, and let go when the command ends", async () => {
      if (!builtProgram('wb-netrelay')) {
        const why = 'dist/native/wb-netrelay was not built';
        if (process.env.CI === 'true') throw new Error(why);
        return void console.log(`SKIP the relay hand-over (server as ${as}): ${why}`);
      }
      const relay = descendantsOf(trusted.pid).find((p) => p.cmdline.includes('wb-netrelay'));
      expect(relay, 'the relay runs').toBeDefined();
      const held = () => descriptorLinks(relay?.pid as number);
      rmSync(path.join(ws, 'go-relay'), { force: true });
      // The sandbox's own listener on 127.0.0.1:3128 (0C38), as the command sees it: its socket's inode.
      const cmd = [
        `awk '$2 ~ /:0C38$/ && $4 == "0A" {print "listener " $10}' /proc/net/tcp`,
        `curl -sS -o /dev/null -w "code %{http_code}\\n" --cacert standin-ca.pem https://site.test:${reg.port}/small/h`,
        'for i in $(seq 1200); do [ -e go-relay ] && break; sleep 0.05; done',
      ].join('; ');
      const started = await call(trusted.url, 'exec_command', { cmd, yield_time_ms: 0 });
      const id = started.sc.command_id as string;
      const { stdout } = await pollUntil(trusted.url, id, /code \d{3}/, '', started.sc.stdout ?? '');
      expect(stdout).toContain('code 200');
      const socket = `socket:[${/listener (\d+)/.exec(stdout)?.[1]}]`;
      expect(held()).toContain(socket);
      writeFileSync(path.join(ws, 'go-relay'), '');
      const end = await pollUntil(trusted.url, id, null);
      expect(end.last.sc.status).toBe('exited');
      // The bridge ends with the command; with it, the relay's hold on the sandbox's listener.
      expect(
        await until(
          async () => held().includes(socket),
          (h) => !h,
        ),
      ).toBe(false);
    });

    it('safe: a grant lets one command through once; a socket it passed on carries nothing after it ended', async () => {
      const port = (echo.address() as AddressInfo).port;
      const args = { cmd: `python3 send.py ${port}`, yield_time_ms: 30_000 };
      const exec = async (
        retry: Record<string, unknown> = {},
        meta: Record<string, unknown> = ELICIT_META,
      ) => {
        const r = request('modern', 'tools/call', { name: 'exec_command', arguments: args, ...retry });
        (r.body.params as any)._meta = meta;
        return (await send(safe.url, r, bearer())).json.result;
      };
      const first = await exec();
      expect(first.structuredContent.stdout).toMatch(/^HTTP\/1\.1 403/);
      expect(first.structuredContent.blocked?.what).toBe(`granted.test:${port}`);
      const asked = await exec();
      expect(asked.resultType).toBe('input_required');
      // The later command waits for a descriptor before the granted one runs.
      const receiver = await call(safe.url, 'exec_command', { cmd: 'python3 recv.py', yield_time_ms: 0 });
      const id = receiver.sc.command_id as string;
      const listening = await pollUntil(safe.url, id, /listening/, '', receiver.sc.stdout ?? '');
      expect(listening.stdout).toContain('listening');
      const ran = await exec({
        requestState: asked.requestState,
        inputResponses: { approve: { action: 'accept' } },
      });
      expect(ran.structuredContent, JSON.stringify(ran)).toMatchObject({ status: 'exited', exit_code: 0 });
      expect(ran.structuredContent.stdout).toContain('HTTP/1.1 200');
      expect(ran.structuredContent.stdout).toContain("echo b'during\\n'");
      expect(ran.structuredContent.stdout).toContain('passed');
      // The granted command has ended (its result says exited): now the receiver tries the socket.
      writeFileSync(path.join(ws, 'go'), '');
      const after = await pollUntil(safe.url, id, null, '', listening.stdout);
      expect(after.last.sc.status).toBe('exited');
      expect(after.stdout).toContain('received');
      expect(after.stdout).toMatch(/reply b''|dead \d+/);
      expect(echoed).toBe('during\n');
      // The grant is gone: the same call, from a client that cannot ask, is refused by the allow-list again.
      const again = await exec({}, META);
      expect(again.structuredContent.stdout).toMatch(/^HTTP\/1\.1 403/);
      expect(again.structuredContent.blocked?.why).toBe('not on the allow-list');
    });
  });
}
