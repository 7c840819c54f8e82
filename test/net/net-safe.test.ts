// `safe` mode's network (docs/tools.md#network-in-safe-mode), with real sandboxes: no direct network, HTTP(S)
// only through the server's filtering proxy, reached through the bridge on the sandbox's own loopback. A
// stand-in registry over HTTPS with a throwaway CA answers as registry.npmjs.org, pypi.org and
// files.pythonhosted.org (names on the default allow-list, mapped to 127.0.0.1 by the test-only WB_TEST_RESOLVE;
// loopback let through by SERVICE_NETWORK_ALLOW_PRIVATE), so `npm install` and `pip download` succeed without a
// prompt; a name not on the list is refused at once with a readable 403 and the result's `blocked` note names
// the next call; raw TCP and UDP fail; an allowed name resolving to 127.0.0.1 is refused without the loopback
// setting; a grant through the client lets one command through and the next is refused again. Every decision
// is in the audit log. Needs bubblewrap and the built bridge (a C compiler): skipped with the reason when either
// is absent, a failure under CI=true. Nothing here passes or fails by speed: waits end on events, and "at once"
// is checked as "no lookup and no connection was attempted", from the audit log.
import {
  existsSync,
  mkdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import dgram from 'node:dgram';
import net, { type AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtProgram } from '../../src/process/native.js';
import { NOTE_MAX_BYTES } from '../../src/process/commands/blocked.js';
import { planSandbox } from '../../src/process/sandbox/sandbox.js';
import { KEPT_READY } from '../../src/process/spawner/prepared-sandbox.js';
import { call, needBwrap } from '../exec/exec-support.js';
import { bearer, ELICIT_META, META, request, send, until } from '../helpers/raw-http.js';
import { descendantsOf, descriptorLinks } from '../helpers/hostile-bin.js';
import { startInProcess, type InProcessServer } from '../helpers/server.js';
import {
  FILES_NAME,
  NPM_NAME,
  PYPI_NAME,
  startStandinRegistry,
  type StandinRegistry,
} from '../helpers/standin-registry.js';
import { makeWorkspace, type TempWorkspace } from '../helpers/workspace.js';

/* eslint-disable @typescript-eslint/no-explicit-any */
function needBridge(): boolean {
  if (builtProgram('wb-netbridge')) return true;
  const why = 'dist/native/wb-netbridge is not built (no C compiler when npm run build ran)';
  if (process.env.CI === 'true')
    throw new Error(`the safe-mode network tests need the bridge under CI=true, but ${why}`);
  console.log(`SKIP the safe-mode network tests: ${why}`);
  return false;
}

const enabled = needBwrap('the safe-mode network tests') && needBridge();
const d = enabled ? describe : describe.skip;
const RESOLVE = `${NPM_NAME}=127.0.0.1,${PYPI_NAME}=127.0.0.1,${FILES_NAME}=127.0.0.1,granted.test=127.0.0.1`;

d('safe mode: HTTP(S) through the filtering proxy only', () => {
  let ws: TempWorkspace;
  let reg: StandinRegistry;
  let server: InProcessServer;
  let strict: InProcessServer;
  let audit: string;
  let tcp: net.Server;
  let tcpSeen = 0;
  let udp: dgram.Socket;
  let udpSeen = 0;

  beforeAll(async () => {
    ws = makeWorkspace({ 'README.md': '# net\n', 'package.json': '{"name":"ws","version":"1.0.0"}\n' });
    reg = await startStandinRegistry(ws.dir, { extraNames: ['granted.test'] });
    audit = path.join(ws.dir, '..', `${path.basename(ws.dir)}-audit.jsonl`);
    const env = {
      SERVICE_SANDBOX: 'bwrap',
      WB_TEST_RESOLVE: RESOLVE,
      SERVICE_NETWORK_ALLOW_PRIVATE: '127.0.0.1',
      SERVICE_AUDIT_LOG: audit,
    };
    server = await startInProcess({ workspace: ws.dir, env });
    // The same, without the loopback setting: an allowed name that resolves to 127.0.0.1 is refused.
    strict = await startInProcess({
      workspace: ws.dir,
      env: { SERVICE_SANDBOX: 'bwrap', WB_TEST_RESOLVE: RESOLVE },
    });
    tcp = net.createServer((s) => {
      tcpSeen++;
      s.destroy();
    });
    await new Promise<void>((r) => tcp.listen(0, '127.0.0.1', () => r()));
    udp = dgram.createSocket('udp4');
    udp.on('message', () => udpSeen++);
    await new Promise<void>((r) => udp.bind(0, '127.0.0.1', () => r()));
  });
  afterAll(async () => {
    await Promise.all([server?.close(), strict?.close(), reg?.close()]);
    tcp?.close();
    udp?.close();
    ws?.cleanup();
  });

  const run = (s: InProcessServer, cmd: string, env: Record<string, string> = {}) =>
    call(s.url, 'exec_command', { cmd, env, yield_time_ms: 30_000, timeout_ms: 300_000 });
  /** The command's result, polled to its end (npm may take longer than one yield on a busy machine). */
  const finish = async (s: InProcessServer, cmd: string, env: Record<string, string> = {}) => {
    let r = await run(s, cmd, env);
    const notes = r.sc.blocked ? [r.sc.blocked] : [];
    let out = `${r.sc.stdout ?? ''}`;
    let err = `${r.sc.stderr ?? ''}`;
    while (r.sc.status === 'running') {
      r = await call(s.url, 'write_stdin', { command_id: r.sc.command_id, chars: '', yield_time_ms: 30_000 });
      if (r.sc.blocked) notes.push(r.sc.blocked);
      out += r.sc.stdout ?? '';
      err += r.sc.stderr ?? '';
    }
    return { ...r, out, err, notes };
  };
  const decisions = () =>
    existsSync(audit)
      ? readFileSync(audit, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l))
          .filter((e) => e.event === 'network')
      : [];

  it('check_exec_environment and server_info say commands reach HTTP(S) through the proxy', async () => {
    const c = await call(server.url, 'check_exec_environment');
    expect(c.sc.sandbox).toMatchObject({ in_use: 'bwrap', network: 'proxy' });
    expect(c.sc.policy.network).toMatch(/proxy/);
    expect(c.sc.environment.set.HTTPS_PROXY).toMatch(/^http:\/\/wb:.*@127\.0\.0\.1:3128$/);
    const i = await call(server.url, 'server_info');
    expect(i.sc.sandbox.reason).toMatch(/filtering proxy/);
  });

  it('npm install of a package from the stand-in registry succeeds, with no prompt and no note', async () => {
    const r = await finish(
      server,
      `npm install --no-audit --no-fund --no-update-notifier --registry ${reg.npmRegistry} wb-tiny && node -e "console.log(require('wb-tiny'))"`,
      // npm's own cafile setting (Debian sets one globally) wins over NODE_EXTRA_CA_CERTS.
      { npm_config_cafile: reg.caPath },
    );
    expect(r.sc.exit_code, r.err).toBe(0);
    expect(r.out).toContain('wb-tiny works');
    expect(r.notes).toEqual([]);
    expect(reg.seen).toContain(`GET ${NPM_NAME} /wb-tiny/-/wb-tiny-1.0.0.tgz`);
    const allowed = decisions().filter((e) => e.host === NPM_NAME && e.allowed);
    expect(allowed.length).toBeGreaterThan(0);
    expect(allowed[0]).toMatchObject({ method: 'CONNECT', address: '127.0.0.1' });
    expect(typeof allowed[0].command_id).toBe('string');
  });

  it('pip download from a stand-in simple index (PEP 503) succeeds', async () => {
    const probe = await run(server, 'python3 -m pip --version');
    if (probe.sc.exit_code !== 0) {
      const why = `pip is not installed for the python3 commands see (${(probe.sc.stderr ?? '').trim()})`;
      if (process.env.CI === 'true') throw new Error(why);
      console.log(`SKIP pip download: ${why}`);
      return;
    }
    const r = await finish(
      server,
      `python3 -m pip download --no-deps --disable-pip-version-check --index-url ${reg.pipIndex} --cert ${reg.caPath} -d dl wb-tiny && ls dl`,
    );
    expect(r.sc.exit_code, r.err).toBe(0);
    expect(r.out).toContain('wb_tiny-1.0.0-py3-none-any.whl');
    expect(r.notes).toEqual([]);
    expect(reg.seen.some((s) => s.startsWith(`GET ${FILES_NAME} /packages/`))).toBe(true);
  });

  it('a name not on the allow-list: 403 from the proxy at once, and the first result carries the blocked note', async () => {
    const before = decisions().length;
    const r = await run(server, 'curl -sS -o /dev/null https://example.com/; echo "curl=$?"');
    expect(r.sc.status).toBe('exited');
    expect(r.sc.stdout).toContain('curl=56'); // CONNECT answered 403
    expect(r.sc.stderr).toMatch(/CONNECT tunnel failed, response 403/);
    expect(r.sc.blocked).toEqual({
      what: 'example.com',
      why: 'not on the allow-list',
      next: 'request_permissions {"tool_name":"exec_command","permission":"network","reason":"example.com"}',
    });
    expect(Buffer.byteLength(JSON.stringify(r.sc.blocked))).toBeLessThanOrEqual(NOTE_MAX_BYTES);
    expect(r.text).toContain('Blocked: example.com (not on the allow-list). Next: request_permissions');
    // The same note in the text, on one line of at most 200 bytes too.
    const line = (r.text as string).split('\n').find((l) => l.startsWith('Blocked: ')) as string;
    expect(Buffer.byteLength(line)).toBeLessThanOrEqual(NOTE_MAX_BYTES);
    // Refused before any lookup or connection: the decision names no address.
    const refused = decisions()
      .slice(before)
      .find((e) => e.host === 'example.com');
    expect(refused).toMatchObject({ allowed: false, reason: 'not_allowed', method: 'CONNECT' });
    expect(refused.address).toBeUndefined();
    // The body says why, for clients that show it (plain HTTP through the proxy).
    const body = await run(server, 'curl -sS http://example.com/');
    expect(body.sc.stdout).toContain('example.com is not on this server');
    expect(body.sc.stdout).toContain('SERVICE_NETWORK_ALLOW');
  });

  it('a command that succeeds carries no note; the note is not repeated on a later poll', async () => {
    const r = await run(server, 'echo fine');
    expect(r.sc.blocked).toBeUndefined();
    expect(r.text).not.toContain('Blocked');
  });

  it('raw TCP and UDP do not leave the sandbox (no route, no name lookup), and the lookup says so', async () => {
    const tcpPort = (tcp.address() as AddressInfo).port;
    const udpPort = (udp.address() as AddressInfo).port;
    const py = [
      'import socket',
      'for addr in [("1.1.1.1", 53), ("127.0.0.1", %T)]:',
      '  s = socket.socket(); s.settimeout(5)',
      '  try: s.connect(addr); print("tcp-connected", addr)',
      '  except OSError as e: print("tcp-failed", addr, e.errno)',
      'u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)',
      'for addr in [("1.1.1.1", 53), ("127.0.0.1", %U)]:',
      '  try: u.sendto(b"x", addr); print("udp-sent", addr)',
      '  except OSError as e: print("udp-failed", addr, e.errno)',
    ]
      .join('\n')
      .replace('%T', String(tcpPort))
      .replace('%U', String(udpPort));
    const r = await run(server, `python3 -c '${py}'`);
    expect(r.sc.stdout).not.toContain('tcp-connected');
    expect(r.sc.stdout).toContain("udp-failed ('1.1.1.1', 53)");
    // A datagram to the sandbox's own loopback goes nowhere near the host's.
    await new Promise((res) => setTimeout(res, 200));
    expect(tcpSeen).toBe(0);
    expect(udpSeen).toBe(0);
    const lookup = await run(server, 'curl -sS --noproxy "*" https://example.com/');
    expect(lookup.sc.stderr).toMatch(/Could not resolve host/);
    expect(lookup.sc.blocked, JSON.stringify(lookup.sc)).toMatchObject({ what: 'name lookup' });
  });

  it('an allowed name that resolves to 127.0.0.1 is refused without SERVICE_NETWORK_ALLOW_PRIVATE', async () => {
    const r = await run(strict, `curl -sS --cacert ${reg.caPath} ${reg.npmRegistry}wb-tiny; echo "curl=$?"`);
    expect(r.sc.stdout).toContain('curl=56');
    expect(reg.seen.filter((s) => s.includes('/wb-tiny') && s.startsWith('GET')).length).toBeGreaterThan(0);
    expect(r.sc.blocked).toMatchObject({
      what: `${NPM_NAME}:${reg.port}`,
      why: 'resolves to loopback address 127.0.0.1',
      next: `operator: SERVICE_NETWORK_ALLOW_PRIVATE=${NPM_NAME}`,
    });
    // With the setting (the other server), the same request is answered by the stand-in.
    const ok = await run(server, `curl -sS --cacert ${reg.caPath} ${reg.npmRegistry}wb-tiny`);
    expect(ok.sc.stdout).toContain('"dist-tags"');
  });

  it('a grant asked through the client lets that one command through; the next run is refused again', async () => {
    const args = {
      cmd: `curl -sS -o /dev/null -w "%{http_code}" --cacert ${reg.caPath} https://granted.test:${reg.port}/small/x`,
      yield_time_ms: 30_000,
    };
    const exec = async (retry: Record<string, unknown> = {}, meta: Record<string, unknown> = ELICIT_META) => {
      const r = request('modern', 'tools/call', { name: 'exec_command', arguments: args, ...retry });
      (r.body.params as any)._meta = meta;
      return (await send(server.url, r, bearer())).json.result;
    };
    // First run: refused by the proxy; the note names the next call.
    const first = await exec();
    expect(first.structuredContent.blocked?.what).toBe(`granted.test:${reg.port}`);
    // request_permissions grants nothing; it tells a client that can ask to send the call again.
    const rp = request('modern', 'tools/call', {
      name: 'request_permissions',
      arguments: { tool_name: 'exec_command', permission: 'network', reason: 'reach granted.test' },
    });
    (rp.body.params as any)._meta = ELICIT_META;
    expect((await send(server.url, rp, bearer())).json.result.structuredContent).toMatchObject({
      ask_on_call: true,
    });
    // The same call again: the user is asked about exactly that host.
    const asked = await exec();
    expect(asked.resultType).toBe('input_required');
    expect(asked.inputRequests.approve.params.message).toContain('granted.test');
    // Accepted: this one run reaches the host, through the proxy, and the audit log says it was granted.
    const ran = await exec({
      requestState: asked.requestState,
      inputResponses: { approve: { action: 'accept' } },
    });
    expect(ran.resultType).toBe('complete');
    expect(ran.structuredContent).toMatchObject({ ok: true, exit_code: 0, stdout: '200' });
    expect(ran.structuredContent.blocked).toBeUndefined();
    expect(decisions().filter((e) => e.host === 'granted.test' && e.granted === true)).toHaveLength(1);
    // The next run (a client that cannot ask): refused again by the allow-list.
    const again = await exec({}, META);
    expect(again.structuredContent.blocked?.why).toBe('not on the allow-list');
  });

  it('a client that cannot ask, with the console open: a refused host waits for the operator; approved, that one run reaches it', async () => {
    const args = {
      cmd: `curl -sS -o /dev/null -w "%{http_code}" --cacert ${reg.caPath} https://granted.test:${reg.port}/small/console`,
      yield_time_ms: 30_000,
    };
    const exec = async () =>
      (
        await send(
          server.url,
          request('handshake', 'tools/call', { name: 'exec_command', arguments: args }),
          bearer(),
        )
      ).json.result;
    const first = await exec();
    expect(first.structuredContent.blocked?.what).toBe(`granted.test:${reg.port}`);
    // A console page is open (docs/console.md#approvals): the same call now waits for the operator.
    const desk = server.runtime.approvals!;
    const release = desk.watch();
    try {
      const asked = new Promise<{ id: string; command?: string }>((resolve) => {
        const stop = desk.changes.listen((v) => {
          if (v.kind === 'network' && v.state === 'pending' && v.subject === 'granted.test') {
            stop();
            resolve(v);
          }
        });
      });
      const running = exec();
      const { id, command } = await asked;
      // The card shows the command that runs if approved, beside the host.
      expect(command).toBe(args.cmd);
      expect(desk.decide(id, { action: 'approve' }).ok).toBe(true);
      const ran = await running;
      expect(ran.structuredContent).toMatchObject({ ok: true, exit_code: 0, stdout: '200' });
      expect(
        decisions().filter((e) => e.host === 'granted.test' && e.granted === true).length,
      ).toBeGreaterThan(0);
    } finally {
      release();
    }
    // Spent: with no page open the next run meets the allow-list again.
    const again = await exec();
    expect(again.structuredContent.blocked?.why).toBe('not on the allow-list');
  });

  it('where the bridge was not built, or cannot run here, safe has no network and the sandbox says why', async () => {
    const dirs = server.runtime.dirs;
    const fakeDir = path.join(ws.dir, 'fake-net');
    mkdirSync(fakeDir, { recursive: true });
    const fake = path.join(fakeDir, 'fake-bridge.sh');
    writeFileSync(fake, '#!/bin/sh\nexit 3\n', { mode: 0o755 });
    const ctx = {
      mode: 'safe' as const,
      requested: 'bwrap' as const,
      pathVar: process.env.PATH,
      workspaceReal: realpathSync(ws.dir),
      dirs,
      privateFiles: [],
      seccompFile: undefined,
    };
    const broken = planSandbox({
      ...ctx,
      net: { dir: fakeDir, socket: path.join(fakeDir, 'proxy.sock'), bridgeAt: fake },
    });
    expect(broken.status).toMatchObject({ in_use: 'bwrap', network: 'none' });
    expect(broken.status.reason).toContain('no proxy: the network bridge cannot run here');
    const absent = planSandbox({ ...ctx, net: { unavailable: 'the bridge program was not built (test)' } });
    expect(absent.status).toMatchObject({ in_use: 'bwrap', network: 'none' });
    expect(absent.status.reason).toContain('no proxy: the bridge program was not built (test)');
  });

  it('no host socket is bound into the sandbox: only the directory of the proxy socket, the bridge and wb-exec, read-only', async () => {
    const netDir = path.join(server.runtime.dirs.root, 'net');
    const r = await run(server, `cat /proc/self/mountinfo; ls -A ${netDir}`);
    const out = r.sc.stdout as string;
    // mountinfo's fifth field is the mount point.
    const mounts = out.split('\n').filter((l) => l.split(' ')[4]?.startsWith(server.runtime.dirs.root));
    const net = mounts.filter((l) => l.split(' ')[4] === netDir);
    expect(net).toHaveLength(1);
    expect(net[0]).toMatch(/\sro[,\s]/);
    expect(out.split('\n').slice(-4, -1).sort()).toEqual(['proxy.sock', 'wb-exec', 'wb-netbridge']);
    const w = await run(server, `echo x > ${netDir}/proxy.sock; echo x > ${netDir}/other; echo "rc=$?"`);
    expect(w.sc.stdout).toContain('rc=1');
  });
  it("the server's relay accepts a command's connections itself (the bridge handed its listener over); the relay killed, the bridge carries on", async () => {
    if (!builtProgram('wb-netrelay')) {
      const why = 'dist/native/wb-netrelay was not built';
      if (process.env.CI === 'true') throw new Error(why);
      return void console.log(`SKIP the relay hand-over: ${why}`);
    }
    const root = server.runtime.dirs.root;
    const sock = path.join(root, 'net', 'proxy.sock');
    // Whether a relay has the socket's path: the hand-over bytes with no descriptor, the relay closes on without
    // a word; the server's parser would answer 400.
    const relayHasPath = () =>
      new Promise<boolean>((resolve) => {
        const s = net.connect(sock);
        let got = '';
        s.on('data', (d) => (got += d.toString('latin1')));
        s.on('close', () => resolve(got === ''));
        s.on('error', () => resolve(false));
        s.write('\0wbl');
      });
    // The relay that runs once one has the path: on a busy machine the first one may still be starting (and be
    // replaced if it did not listen in time), and the one found before that would not be the one that serves.
    expect(await until(relayHasPath, (ok) => ok), 'a relay serves the socket').toBe(true);
    const relay = descendantsOf(process.pid).find(
      (p) => p.cmdline.includes('wb-netrelay') && p.cmdline.includes(`${root}/proxy-server.sock`),
    );
    expect(relay, 'the relay runs').toBeDefined();
    // From the server's private copy in its runtime directory's root, never dist/ (docs/security-model.md, rule B).
    expect(path.dirname(readlinkSync(`/proc/${relay?.pid}/exe`))).toBe(root);
    const fetch = (tag: string) =>
      `curl -sS --cacert ${reg.caPath} -o /dev/null -w '${tag} %{http_code}\\n' ${reg.npmRegistry}/wb-tiny`;
    // The sandbox's own listener on 127.0.0.1:3128 (0C38), as the command sees it: its socket's inode.
    const cmd = [
      `awk '$2 ~ /:0C38$/ && $4 == "0A" {print "listener " $10}' /proc/net/tcp`,
      fetch('first'),
      'for i in $(seq 1200); do [ -e go-relay ] && break; sleep 0.05; done',
      fetch('second'),
    ].join('; ');
    rmSync(path.join(ws.dir, 'go-relay'), { force: true });
    const started = await call(server.url, 'exec_command', { cmd, yield_time_ms: 0 });
    const id = started.sc.command_id as string;
    let out = `${started.sc.stdout ?? ''}`;
    let r = started;
    while (!/first \d{3}/.test(out) && r.sc.status === 'running') {
      r = await call(server.url, 'write_stdin', { command_id: id, chars: '', yield_time_ms: 30_000 });
      out += r.sc.stdout ?? '';
    }
    expect(out).toMatch(/first [1-5]\d\d/); // an HTTP answer came back (curl writes 000 when none)
    const inode = /listener (\d+)/.exec(out)?.[1];
    expect(inode, out).toBeDefined();
    expect(descriptorLinks(relay?.pid as number)).toContain(`socket:[${inode}]`);
    // The relay dies: the server listens on the socket's path again, and the bridge, whose connection to the
    // relay ended, accepts and relays the command's next connection itself. (Not told by the file's inode
    // number: ext4 gives a new file the number the removed one had.)
    process.kill(relay?.pid as number, 'SIGKILL');
    // First the relay's death itself: until its process is gone (or a zombie), its listening socket still takes
    // connections into its backlog, and on a busy machine the check below would pass against the dying relay,
    // before the server listens again (the command's next fetch then finds nobody on the path).
    const dead = async () => {
      try {
        return /^\d+ \(.*\) Z/.test(readFileSync(`/proc/${relay?.pid}/stat`, 'utf8'));
      } catch {
        return true;
      }
    };
    expect(await until(dead, (ok) => ok), 'the killed relay is gone').toBe(true);
    const accepted = () =>
      new Promise<boolean>((resolve) => {
        const s = net.connect(sock);
        s.once('connect', () => {
          s.destroy();
          resolve(true);
        });
        s.once('error', () => resolve(false));
      });
    expect(await until(accepted, (ok) => ok), 'the server listens on the proxy socket again').toBe(true);
    writeFileSync(path.join(ws.dir, 'go-relay'), '');
    while (r.sc.status === 'running') {
      r = await call(server.url, 'write_stdin', { command_id: id, chars: '', yield_time_ms: 30_000 });
      out += r.sc.stdout ?? '';
    }
    expect(r.sc.exit_code, out).toBe(0);
    expect(out).toMatch(/second [1-5]\d\d/);
    // A new relay, from the private copy, takes the socket's path again; the next command's bridge hands its
    // listener to it.
    const next = await until(
      async () =>
        descendantsOf(process.pid).find(
          (p) =>
            p.pid !== relay?.pid &&
            p.cmdline.includes('wb-netrelay') &&
            p.cmdline.includes(`${root}/proxy-server.sock`),
        ),
      (p) => p !== undefined,
    );
    expect(next, 'a new relay runs').toBeDefined();
    // ...and has the socket's path.
    expect(await until(relayHasPath, (ok) => ok), 'the new relay serves the socket').toBe(true);
    expect(path.dirname(readlinkSync(`/proc/${next?.pid}/exe`))).toBe(root);
    // The sandboxes prepared before the new relay listened (KEPT_READY wait) handed their listeners to the relay
    // that died, or offered them to the server, which refuses them: as many commands use them up; the one after
    // them starts in a sandbox prepared since the new relay listens (in the quiet moment after one of them ended).
    for (let i = 0; i < KEPT_READY; i++) {
      const spent = await call(server.url, 'exec_command', { cmd: 'true', yield_time_ms: 30_000 });
      expect(spent.sc.exit_code).toBe(0);
    }
    rmSync(path.join(ws.dir, 'go-third'), { force: true });
    const cmd3 = [
      cmd.split('; ')[0],
      fetch('third'),
      'for i in $(seq 1200); do [ -e go-third ] && break; sleep 0.05; done',
    ].join('; ');
    let r3 = await call(server.url, 'exec_command', { cmd: cmd3, yield_time_ms: 0 });
    let out3 = `${r3.sc.stdout ?? ''}`;
    const id3 = r3.sc.command_id as string;
    while (!/third \d{3}/.test(out3) && r3.sc.status === 'running') {
      r3 = await call(server.url, 'write_stdin', { command_id: id3, chars: '', yield_time_ms: 30_000 });
      out3 += r3.sc.stdout ?? '';
    }
    expect(out3).toMatch(/third [1-5]\d\d/);
    const inode3 = /listener (\d+)/.exec(out3)?.[1];
    expect(inode3, out3).toBeDefined();
    expect(descriptorLinks(next?.pid as number)).toContain(`socket:[${inode3}]`);
    writeFileSync(path.join(ws.dir, 'go-third'), '');
    while (r3.sc.status === 'running') {
      r3 = await call(server.url, 'write_stdin', { command_id: id3, chars: '', yield_time_ms: 30_000 });
    }
    expect(r3.sc.exit_code, out3).toBe(0);
  });
});
