// The command line, exactly as a user runs it: `node dist/cli/main.js …` (build first). Checks
// docs/design-notes.md#command-line, #secrets-at-start and #one-workspace-one-runtime; the configuration table
// of docs/configuration.md is checked by test/docs.test.ts.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENTRIES } from '../../src/config/schema.js';
import { BIN, REPO_ROOT, startServer, TEST_TOKEN } from '../helpers/server.js';
import { makeWorkspace, type TempWorkspace } from '../helpers/workspace.js';
import { bearer, raw, request, send } from '../helpers/raw-http.js';

let ws: TempWorkspace;
let home: string;

beforeAll(() => {
  ws = makeWorkspace({ 'a.txt': 'alpha\n' });
  home = mkdtempSync(path.join(tmpdir(), 'wb-home-'));
});
afterAll(() => {
  ws?.cleanup();
  if (home) rmSync(home, { recursive: true, force: true });
});

/** Run the bin to completion (for runs that must stop at start-up). */
function run(args: string[], env: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, [BIN, ...args], {
    env: { PATH: process.env.PATH ?? '', HOME: home, ...env },
    encoding: 'utf8',
    timeout: 60_000, // only ends a hung run
  });
  return { status: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr };
}

describe('--help and --version (docs/configuration.md)', () => {
  it('--help prints usage naming every flag and its variable on stdout, exit 0', () => {
    const r = run(['--help']);
    expect(r.status).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.stdout).toMatch(/Usage/);
    // Each flag with its variable, what it accepts and its default, then its meaning.
    expect(r.stdout).toContain('--port <an integer from 0 to 65535>   (SERVICE_PORT; default: 8765)');
    expect(r.stdout).toMatch(
      /SERVICE_AUTH_TOKEN \(default: generated once per workspace and kept \(printed when made\)\)\n +Static bearer token/,
    );
    for (const flag of [
      '--workspace',
      '--host',
      '--port',
      '--stdio',
      '--auth-mode',
      '--permission-mode',
      '--dangerously-fake-readonly-annotations',
    ]) {
      expect(r.stdout).toContain(flag);
    }
    for (const e of ENTRIES.filter((x) => x.flag)) expect(r.stdout).toContain(`SERVICE_${e.env}`);
    // Every subcommand is listed with what it does.
    for (const sub of ['tunnel', 'doctor', 'token', 'console'])
      expect(r.stdout).toMatch(new RegExp(`^  workbench-mcp ${sub}\\b`, 'm'));
  });

  it('--version prints the package version, exit 0', () => {
    const version = (
      JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }
    ).version;
    const r = run(['--version']);
    expect(r.status).toBe(0);
    expect(r.stdout).toBe(`${version}\n`);
  });
});

describe('invalid values → exit 2 with one line naming the variable or flag (docs/design-notes.md#command-line)', () => {
  // | args | environment | the line names |
  const CASES: Array<[string, string[], Record<string, string>, string]> = [
    ['SERVICE_PORT=abc', [], { SERVICE_PORT: 'abc' }, 'SERVICE_PORT'],
    ['SERVICE_PORT=-1', [], { SERVICE_PORT: '-1' }, 'SERVICE_PORT'],
    ['--port 70000', ['--port', '70000'], {}, '--port'],
    ['--port=70000', ['--port=70000'], {}, '--port'],
    ['--port abc', ['--port', 'abc'], {}, '--port'],
    ['--port with no value', ['--port'], {}, '--port'],
    ['SERVICE_PERMISSION_MODE=x', [], { SERVICE_PERMISSION_MODE: 'x' }, 'SERVICE_PERMISSION_MODE'],
    ['--permission-mode x', ['--permission-mode', 'x'], {}, '--permission-mode'],
    ['SERVICE_AUTH_MODE=x', [], { SERVICE_AUTH_MODE: 'x' }, 'SERVICE_AUTH_MODE'],
    ['--auth-mode x', ['--auth-mode', 'x'], {}, '--auth-mode'],
    [
      'bad boolean SERVICE_TRUST_PROXY_HEADERS=yes',
      [],
      { SERVICE_TRUST_PROXY_HEADERS: 'yes' },
      'SERVICE_TRUST_PROXY_HEADERS',
    ],
    [
      'bad boolean SERVICE_DANGEROUSLY_FAKE_READONLY_ANNOTATIONS=on',
      [],
      { SERVICE_DANGEROUSLY_FAKE_READONLY_ANNOTATIONS: 'on' },
      'SERVICE_DANGEROUSLY_FAKE_READONLY_ANNOTATIONS',
    ],
    [
      'bad boolean SERVICE_ENABLE_VIEW_IMAGE=2',
      [],
      { SERVICE_ENABLE_VIEW_IMAGE: '2' },
      'SERVICE_ENABLE_VIEW_IMAGE',
    ],
    ['bad boolean --external-auth-proxy=maybe', ['--external-auth-proxy=maybe'], {}, '--external-auth-proxy'],
    ['SERVICE_MAX_REQUEST_BYTES=10', [], { SERVICE_MAX_REQUEST_BYTES: '10' }, 'SERVICE_MAX_REQUEST_BYTES'],
    ['SERVICE_LOG_LEVEL=loud', [], { SERVICE_LOG_LEVEL: 'loud' }, 'SERVICE_LOG_LEVEL'],
    ['SERVICE_SANDBOX=docker', [], { SERVICE_SANDBOX: 'docker' }, 'SERVICE_SANDBOX'],
    ['SERVICE_SERVER_URL=not a url', [], { SERVICE_SERVER_URL: 'not a url' }, 'SERVICE_SERVER_URL'],
    [
      'SERVICE_OAUTH_TOKEN_SECRET too short',
      [],
      { SERVICE_OAUTH_TOKEN_SECRET: 'abcd' },
      'SERVICE_OAUTH_TOKEN_SECRET',
    ],
    ['SERVICE_AUTH_TOKEN too short', [], { SERVICE_AUTH_TOKEN: 'short' }, 'SERVICE_AUTH_TOKEN'],
    [
      'SERVICE_AUTH_TOKEN_FILE missing',
      [],
      { SERVICE_AUTH_TOKEN_FILE: '/nonexistent/token' },
      'SERVICE_AUTH_TOKEN_FILE',
    ],
    ['unknown flag', ['--frobnicate'], {}, '--frobnicate'],
    ['unknown flag with a value', ['--colour=red'], {}, '--colour'],
    [
      'a secret as a flag: --auth-token',
      ['--auth-token', 'abcdefghijklmnopqrstuvwxyz'],
      {},
      'SERVICE_AUTH_TOKEN',
    ],
    [
      'a secret as a flag: --auth-token=…',
      ['--auth-token=abcdefghijklmnopqrstuvwxyz'],
      {},
      'SERVICE_AUTH_TOKEN',
    ],
    [
      'a secret as a flag: --oauth-password',
      ['--oauth-password', 'hunter2hunter2'],
      {},
      'SERVICE_OAUTH_PASSWORD',
    ],
    [
      'a secret as a flag: --oauth-token-secret',
      ['--oauth-token-secret', 'ab'.repeat(32)],
      {},
      'SERVICE_OAUTH_TOKEN_SECRET',
    ],
    [
      'a secret as a flag: --oauth-client-secret',
      ['--oauth-client-secret', 'sekrit-sekrit'],
      {},
      'SERVICE_OAUTH_CLIENT_SECRET',
    ],
  ];

  it.each(CASES)('%s', (_name, args, env, names) => {
    // The port comes from the environment so that a --port case is not overridden (a flag wins over its variable).
    const r = run(['--workspace', ws.dir, ...args], {
      SERVICE_PORT: '0',
      SERVICE_AUTH_TOKEN: TEST_TOKEN,
      ...env,
    });
    expect(r.status, r.stderr).toBe(2);
    expect(r.stdout).toBe('');
    const lines = r.stderr.replace(/\n$/, '').split('\n');
    expect(lines, r.stderr).toHaveLength(1);
    expect(lines[0]).toContain(names);
    expect(lines[0]).not.toMatch(/at .*\.js:\d+/); // no stack trace
    // A secret never echoes back, even in the error line.
    for (const secret of ['abcdefghijklmnopqrstuvwxyz', 'hunter2hunter2', 'ab'.repeat(32), 'sekrit-sekrit']) {
      if (args.some((a) => a.includes(secret))) expect(r.stderr).not.toContain(secret);
    }
  });

  // | workspace | the line names |
  it('workspace `/`, the home directory and a missing directory are refused (exit 2)', () => {
    const cases: Array<[string[], Record<string, string>]> = [
      [['--workspace', '/'], {}],
      [[], { SERVICE_WORKSPACE: '/' }],
      [['--workspace', home], {}],
      [['--workspace', home + '/'], {}],
      [['--workspace', path.join(ws.dir, 'does-not-exist')], {}],
      [['--workspace', path.join(ws.dir, 'a.txt')], {}],
    ];
    for (const [args, env] of cases) {
      const r = run(['--port', '0', ...args], { SERVICE_AUTH_TOKEN: TEST_TOKEN, ...env });
      expect({ args, env, status: r.status }).toEqual({ args, env, status: 2 });
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toMatch(/SERVICE_WORKSPACE|workspace/);
    }
  });

  it('SERVICE_READ_ALLOW / --read-allow: a relative path, `/` and a missing path are refused (exit 2)', () => {
    const cases: Array<[string[], Record<string, string>, RegExp]> = [
      [['--read-allow', 'srv/x'], {}, /--read-allow: "srv\/x" is not an absolute path/],
      [[], { SERVICE_READ_ALLOW: `${ws.dir}:/` }, /SERVICE_READ_ALLOW: "\/" would show the whole host/],
      [['--read-allow', path.join(ws.dir, 'nope')], {}, /--read-allow: .*nope" does not exist/],
    ];
    for (const [args, env, want] of cases) {
      const r = run(['--port', '0', '--workspace', ws.dir, ...args], {
        SERVICE_AUTH_TOKEN: TEST_TOKEN,
        ...env,
      });
      expect({ args, status: r.status }).toEqual({ args, status: 2 });
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toMatch(want);
    }
  });

  it('a non-loopback --host with noauth is refused (exit 2, naming the host setting)', () => {
    for (const [args, env] of [
      [['--host', '0.0.0.0'], { SERVICE_AUTH_MODE: 'noauth' }],
      [['--host', '192.0.2.10', '--auth-mode', 'noauth'], {}],
      [[], { SERVICE_HOST: '::', SERVICE_AUTH_MODE: 'noauth' }],
    ] as Array<[string[], Record<string, string>]>) {
      const r = run(['--workspace', ws.dir, '--port', '0', ...args], env);
      expect(r.status, r.stderr).toBe(2);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toMatch(/HOST/);
    }
  });

  it('a port already in use → exit 2 with one line, and no runtime directory left behind', async () => {
    const rt = mkdtempSync(path.join(tmpdir(), 'wb-rt-'));
    const blocker = net.createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', () => r()));
    try {
      const port = (blocker.address() as net.AddressInfo).port;
      const r = run(['--workspace', ws.dir, '--port', String(port)], {
        SERVICE_AUTH_TOKEN: TEST_TOKEN,
        SERVICE_RUNTIME_ROOT: rt,
      });
      expect(r.status, r.stderr).toBe(2);
      expect(r.stderr.trim().split('\n')).toEqual([
        `workbench-mcp: cannot listen on 127.0.0.1:${port}: EADDRINUSE; another program uses that port: ` +
          'choose another with --port N, or --port 0 for any free port',
      ]);
      const pidDirs = readdirSync(rt, { recursive: true })
        .map(String)
        .filter((p) => p.split(path.sep).length === 3);
      expect(pidDirs).toEqual([]);
    } finally {
      blocker.close();
      rmSync(rt, { recursive: true, force: true });
    }
  });

  it('a flag wins over its variable', async () => {
    const s = await startServer({ workspace: ws.dir, env: { SERVICE_PORT: '1', HOME: home } });
    try {
      expect(s.port).not.toBe(1); // --port 0 (from the helper) beat SERVICE_PORT=1
    } finally {
      await s.stop();
    }
  });
});

describe('start-up, the ready line, tokens and shutdown (docs/design-notes.md#command-line, docs/design-notes.md#secrets-at-start)', () => {
  it('the ready line is exactly `workbench-mcp listening on http://127.0.0.1:PORT/mcp`, and that URL serves', async () => {
    const s = await startServer({ workspace: ws.dir, env: { HOME: home } });
    try {
      const lines = s.stderr().split('\n');
      const ready = lines.filter((l) => l.includes('listening on'));
      expect(ready).toHaveLength(1);
      expect(ready[0]).toMatch(/^workbench-mcp listening on http:\/\/127\.0\.0\.1:\d{1,5}\/mcp$/);
      expect(ready[0]).toBe(`workbench-mcp listening on http://127.0.0.1:${s.port}/mcp`);
      expect(s.port).toBeGreaterThan(0);
      expect((await send(s.url, request('handshake', 'ping'), bearer())).status).toBe(200);
    } finally {
      expect(await s.stop()).toBe(0);
    }
  });

  it('no SERVICE_AUTH_TOKEN: a generated token is printed once on stderr, and it works', async () => {
    const s = await startServer({
      workspace: ws.dir,
      env: { HOME: home, SERVICE_AUTH_TOKEN: '', SERVICE_LOG_LEVEL: 'debug' },
    });
    try {
      const m = /^ {4}([A-Za-z0-9_-]{43})$/m.exec(s.stderr());
      expect(m, s.stderr()).not.toBeNull();
      const token = (m as RegExpExecArray)[1] as string;
      expect((await send(s.url, request('handshake', 'tools/list'), bearer(token))).status).toBe(200);
      expect((await send(s.url, request('modern', 'tools/list'), bearer(token))).status).toBe(200);
      expect((await send(s.url, request('handshake', 'tools/list'), bearer(TEST_TOKEN))).status).toBe(401);
      expect((await send(s.url, request('handshake', 'tools/list'))).status).toBe(401);
      await s.stop();
      expect(s.stderr().split(token).length - 1).toBe(1);
    } finally {
      await s.stop();
    }
  });

  it('a generated token differs between runs', async () => {
    const tokens: string[] = [];
    for (let i = 0; i < 2; i++) {
      const s = await startServer({ workspace: ws.dir, env: { HOME: home, SERVICE_AUTH_TOKEN: '' } });
      tokens.push(/^ {4}([A-Za-z0-9_-]{43})$/m.exec(s.stderr())?.[1] ?? '');
      await s.stop();
    }
    expect(tokens[0]).not.toBe('');
    expect(tokens[0]).not.toBe(tokens[1]);
  });

  it('a configured token (variable or file) is never printed, even at debug level after failed attempts', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'wb-tokfile-'));
    const fileToken = 'file-token-0123456789abcdefgh';
    writeFileSync(path.join(dir, 'token'), fileToken + '\n');
    try {
      const envs: Array<Record<string, string>> = [
        { SERVICE_AUTH_TOKEN: TEST_TOKEN },
        { SERVICE_AUTH_TOKEN: '', SERVICE_AUTH_TOKEN_FILE: path.join(dir, 'token') },
      ];
      for (const env of envs) {
        const token = env.SERVICE_AUTH_TOKEN || fileToken;
        const s = await startServer({
          workspace: ws.dir,
          env: { HOME: home, SERVICE_LOG_LEVEL: 'debug', ...env },
        });
        try {
          expect((await send(s.url, request('handshake', 'ping'), bearer(token))).status).toBe(200);
          expect((await send(s.url, request('handshake', 'ping'), bearer(token + 'x'))).status).toBe(401);
          await send(
            s.url,
            request('handshake', 'tools/call', { name: 'read_file', arguments: { path: token } }),
            bearer(token),
          );
        } finally {
          expect(await s.stop()).toBe(0);
        }
        expect(s.stderr()).not.toContain(token);
        expect(s.stderr()).not.toMatch(/^ {4}[A-Za-z0-9_-]{43}$/m);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it.each(['SIGTERM', 'SIGINT'] as const)(
    '%s → clean exit 0, and the port is closed afterwards',
    async (signal) => {
      const s = await startServer({ workspace: ws.dir, env: { HOME: home } });
      expect((await send(s.url, request('handshake', 'ping'), bearer())).status).toBe(200);
      expect(await s.stop(signal)).toBe(0);
      await expect(raw(s.url, { method: 'GET', timeoutMs: 2000 })).rejects.toThrow();
    },
  );

  // "Promptly" is not measured (a busy machine may take seconds): an idle connection the server kept waiting
  // on would hold the exit until the test's own timeout.
  it('SIGTERM while a keep-alive client holds a connection still exits 0 (not held open by it)', async () => {
    const s = await startServer({ workspace: ws.dir, env: { HOME: home } });
    const agentReq = fetch(s.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...bearer() },
      body: JSON.stringify(request('handshake', 'ping').body),
    });
    expect((await agentReq).status).toBe(200); // fetch keeps its connection open in a pool
    expect(await s.stop('SIGTERM')).toBe(0);
  });
});

describe('stdin/stdout discipline of the HTTP mode', () => {
  it('HTTP mode writes nothing to stdout', async () => {
    const proc = spawn(process.execPath, [BIN, '--workspace', ws.dir, '--port', '0'], {
      env: { PATH: process.env.PATH ?? '', HOME: home, SERVICE_AUTH_TOKEN: TEST_TOKEN },
    });
    let out = '';
    let err = '';
    proc.stdout.on('data', (c: Buffer) => (out += c.toString()));
    proc.stderr.on('data', (c: Buffer) => (err += c.toString()));
    const deadline = Date.now() + 60_000; // only ends a hung start
    while (!/listening on/.test(err) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(err).toMatch(/listening on/);
    const code = await new Promise<number | null>((r) => {
      proc.once('exit', (c) => r(c));
      proc.kill('SIGTERM');
    });
    expect(code, err).toBe(0);
    expect(out).toBe('');
  });
});
