// A newcomer's first hour, as the README has them do it: messages that name what was typed, exit codes, the
// banner's printed commands (they must run as printed: `doctor` and `tunnel` are started from the banner's own
// lines), the warning of `dangerous`, what `noauth` suggests, and the request log at `--log-level debug` with
// refused credentials at `info`.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { READY_LINE } from '../../src/core/ready-line.js';
import { HUNG_MS, waitFor } from '../exec/exec-support.js';
import { bearer, request, send } from '../helpers/raw-http.js';
import { BIN, startServer, TEST_TOKEN } from '../helpers/server.js';
import { standinBin } from '../helpers/tunnel-run.js';
import { makeWorkspace, type TempWorkspace } from '../helpers/workspace.js';

let ws: TempWorkspace;
let dir: string;

beforeAll(() => {
  ws = makeWorkspace({ 'a.txt': 'alpha\n' });
  dir = mkdtempSync(path.join(tmpdir(), 'wb-first-'));
});
afterAll(() => {
  ws?.cleanup();
  rmSync(dir, { recursive: true, force: true });
});

const baseEnv = () => ({
  PATH: process.env.PATH ?? '',
  HOME: path.join(dir, 'home'),
  SERVICE_STATE_DIR: 'off',
});

function run(args: string[], env: Record<string, string> = {}, input?: string) {
  const r = spawnSync(process.execPath, [BIN, ...args], {
    env: { ...baseEnv(), SERVICE_AUTH_TOKEN: TEST_TOKEN, ...env },
    encoding: 'utf8',
    input,
    timeout: 60_000, // only ends a hung run
  });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

/** Exit 2 with exactly one line on stderr, which must match. */
function refused(args: string[], env: Record<string, string>, line: RegExp) {
  const r = run(args, env);
  expect(r.code, r.err).toBe(2);
  const lines = r.err.trim().split('\n');
  expect(lines, r.err).toHaveLength(1);
  expect(lines[0]).toMatch(line);
  return lines[0] as string;
}

describe('messages name what the user typed', () => {
  it('a short token in SERVICE_AUTH_TOKEN_FILE names that variable and the file, not SERVICE_AUTH_TOKEN', () => {
    const file = path.join(dir, 'shorttok');
    writeFileSync(file, 'shorttok\n');
    const line = refused(
      ['--workspace', ws.dir, '--port', '0'],
      { SERVICE_AUTH_TOKEN: '', SERVICE_AUTH_TOKEN_FILE: file },
      new RegExp(
        `^workbench-mcp: SERVICE_AUTH_TOKEN_FILE ${file}: every token must be at least 16 characters \\(one has 8\\)`,
      ),
    );
    expect(line).toContain('openssl rand -hex 32');
    refused(
      ['--workspace', ws.dir, '--port', '0', '--auth-token-file', file],
      { SERVICE_AUTH_TOKEN: '' },
      new RegExp(`^workbench-mcp: --auth-token-file ${file}: every token must be at least 16 characters`),
    );
    refused(
      ['--workspace', ws.dir],
      { SERVICE_AUTH_TOKEN: 'short' },
      /^workbench-mcp: SERVICE_AUTH_TOKEN: every token/,
    );
    const empty = path.join(dir, 'empty-token');
    writeFileSync(empty, '\n');
    refused(
      ['--workspace', ws.dir],
      { SERVICE_AUTH_TOKEN: '', SERVICE_AUTH_TOKEN_FILE: empty },
      /SERVICE_AUTH_TOKEN_FILE .*empty-token holds no token/,
    );
  });

  it('a missing workspace names --workspace when it came from the flag, SERVICE_WORKSPACE when from the variable', () => {
    refused(
      ['--workspace', '/nope', '--port', '0'],
      {},
      /^workbench-mcp: --workspace: workspace \/nope does not exist$/,
    );
    refused(
      ['--port', '0'],
      { SERVICE_WORKSPACE: '/nope' },
      /^workbench-mcp: SERVICE_WORKSPACE: workspace \/nope does not exist$/,
    );
  });

  it('--stdio with an HTTP-only flag is an error naming both; the same setting as a variable is not', () => {
    for (const flags of [
      ['--port', '9000'],
      ['--host', '0.0.0.0'],
      ['--auth-mode', 'oauth'],
      ['--server-url', 'https://x.example'],
    ]) {
      const flag = flags[0] as string;
      refused(
        ['--stdio', '--workspace', ws.dir, ...flags],
        {},
        new RegExp(
          `^workbench-mcp: ${flag} applies to the HTTP server only, and --stdio serves stdin/stdout; drop ${flag} or --stdio$`,
        ),
      );
    }
    const msg = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }) + '\n';
    const r = run(['--stdio', '--workspace', ws.dir], { SERVICE_PORT: '9000' }, msg);
    expect(r.code, r.err).toBe(0);
    expect(JSON.parse(r.out.split('\n')[0] as string)).toMatchObject({ id: 1, result: {} });
  });

  it('tunnel with no provider exits 2 with its usage on stderr; tunnel --help exits 0', () => {
    const r = run(['tunnel']);
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
    expect(r.err).toContain('name a tunnel provider: cloudflared, ngrok, devtunnel');
    expect(r.err).toContain('Usage: workbench-mcp tunnel cloudflared|ngrok|devtunnel');
    expect(run(['tunnel', '--workspace', ws.dir]).code).toBe(2);
    const help = run(['tunnel', '--help']);
    expect(help.code).toBe(0);
    expect(help.out).toContain('--wait SECONDS');
    const wait = run(['tunnel', 'cloudflared', '--wait', '0']);
    expect(wait.code).toBe(2);
    expect(wait.err).toContain('--wait must be a number of seconds from 1 to 3600');
  });
});

describe('the start-up banner', () => {
  it('dangerous: exactly one warning line at start, over HTTP and over stdio', async () => {
    const s = await startServer({ workspace: ws.dir, args: ['--permission-mode', 'dangerous'] });
    try {
      const warnings = s
        .stderr()
        .split('\n')
        .filter((l) => /warn/.test(l));
      expect(warnings).toEqual([
        expect.stringMatching(
          /^workbench-mcp warn: permission mode dangerous: commands run with all of your rights/,
        ),
      ]);
    } finally {
      await s.stop();
    }
    const r = run(['--stdio', '--workspace', ws.dir, '--permission-mode', 'dangerous'], {}, '');
    expect(r.err.split('\n').filter((l) => /permission mode dangerous: commands run/.test(l))).toHaveLength(
      1,
    );
    const safe = await startServer({ workspace: ws.dir });
    try {
      expect(safe.stderr()).not.toMatch(/permission mode dangerous: commands run/);
    } finally {
      await safe.stop();
    }
  });

  it('noauth does not suggest the tunnel it would refuse', async () => {
    const s = await startServer({
      workspace: ws.dir,
      env: { SERVICE_AUTH_MODE: 'noauth', SERVICE_AUTH_TOKEN: '' },
    });
    try {
      expect(s.stderr()).not.toMatch(/tunnel cloudflared/);
      expect(s.stderr()).toContain(
        'noauth answers callers on this machine only; to publish it, restart with --auth-mode bearer or oauth',
      );
    } finally {
      await s.stop();
    }
  });

  it('the printed commands run as printed: doctor passes against the server, then tunnel starts its provider', async () => {
    // As a user runs it: from the workspace, no flags, nothing configured (the token is kept for the workspace).
    const home = path.join(dir, 'user-home');
    mkdirSync(home, { recursive: true });
    const bin = standinBin(path.join(dir, 'standins'));
    const env = { PATH: `${bin}:${process.env.PATH ?? ''}`, HOME: home };
    const server = spawnServer(['--port', '0'], env, ws.dir);
    try {
      const err = await server.until(READY_LINE);
      const doctorLine = /^ {2}check it: +(.+)$/m.exec(err)?.[1] as string;
      // One pasteable command per provider (no `a|b|c` a shell reads as a pipe); no devtunnel after --port 0.
      const tunnelLines =
        /^ {2}reach it from anywhere: +stop this server, then run one of:\n((?: {27}\S.*\n)+)/m
          .exec(err)?.[1]
          ?.trimEnd()
          .split('\n')
          .map((l) => l.trim());
      expect(doctorLine, err).toMatch(/^(node \S+\/dist\/cli\/main\.js|workbench-mcp) doctor --port \d+$/);
      expect(tunnelLines, err).toHaveLength(2);
      for (const [i, p] of ['cloudflared', 'ngrok'].entries())
        expect(tunnelLines?.[i]).toMatch(
          new RegExp(`^(node \\S+/dist/cli/main\\.js|workbench-mcp) tunnel ${p} --port 0$`),
        );

      const doctor = spawnSync('sh', ['-c', doctorLine], {
        cwd: ws.dir,
        env,
        encoding: 'utf8',
        timeout: HUNG_MS,
      });
      expect(doctor.stdout, doctor.stderr).toContain('All checks passed.');
      expect(doctor.stdout).toMatch(/^pass +authenticated tools\/list \(2026-07-28\): \d+ tools$/m);
      expect(doctor.status).toBe(0);

      await server.stop();
      // The provider is picked by the user; its name never resolves here, so the wait ends (exit 6) after 1 s.
      const name = `wb${process.pid}.tunnel.invalid`;
      const line = `${tunnelLines?.[1]} --name ${name} --wait 1`;
      const tunnel = spawnSync('sh', ['-c', line], {
        cwd: ws.dir,
        env,
        encoding: 'utf8',
        timeout: 2 * HUNG_MS,
      });
      expect(tunnel.stderr).toMatch(
        /workbench-mcp tunnel: starting \S+\/ngrok http http:\/\/127\.0\.0\.1:\d+ --log stdout/,
      );
      expect(tunnel.stderr).toContain(
        `workbench-mcp tunnel: waiting until https://${name}/.well-known/mcp.json answers`,
      );
      expect(tunnel.status, tunnel.stderr).toBe(6);
      // The server the tunnel started says the tunnel publishes it, not how to start one.
      expect(tunnel.stderr).toContain('reach it from anywhere:  through the tunnel starting now');
      expect(tunnel.stderr).not.toContain('stop this server');
    } finally {
      await server.stop();
    }
  });
});

describe('logs: the request log at debug, refused credentials at info', () => {
  it('one debug line per request: method, tool, status, duration, client', async () => {
    const s = await startServer({ workspace: ws.dir, env: { SERVICE_LOG_LEVEL: 'debug' } });
    try {
      await send(
        s.url,
        request('handshake', 'tools/call', { name: 'read_file', arguments: { path: 'a.txt' } }),
        {
          ...bearer(),
          'user-agent': 'first-hour-test/1.0',
        },
      );
      await send(s.url, request('modern', 'tools/list'), bearer());
      expect(await waitFor(() => (s.stderr().match(/debug: request /g) ?? []).length >= 2)).toBe(true);
      const lines = s
        .stderr()
        .split('\n')
        .filter((l) => l.startsWith('workbench-mcp debug: request '));
      const fields = lines.map((l) => JSON.parse(l.slice('workbench-mcp debug: request '.length)));
      expect(fields[0]).toMatchObject({
        http: 'POST /mcp',
        method: 'tools/call',
        tool: 'read_file',
        status: 200,
        client: 'token#1',
        agent: 'first-hour-test/1.0',
      });
      expect(typeof fields[0].ms).toBe('number');
      expect(fields[1]).toMatchObject({ method: 'tools/list', status: 200, client: 'token#1' });
      expect(s.stderr()).not.toContain(TEST_TOKEN);
    } finally {
      await s.stop();
    }
    const quiet = await startServer({ workspace: ws.dir });
    try {
      await send(quiet.url, request('handshake', 'tools/list'), bearer());
      await send(quiet.url, request('handshake', 'tools/list'), bearer('wrong-token-0123456789'));
      // At info: no request lines; the refused credential is logged with where it came from (and never itself).
      expect(await waitFor(() => /refused a credential/.test(quiet.stderr()))).toBe(true);
      expect(quiet.stderr()).not.toMatch(/debug: request/);
      expect(quiet.stderr()).toMatch(
        /workbench-mcp info: refused a credential from 127\.0\.0\.1.*: The bearer token is not valid for this server\. \(1 refused since start\)/,
      );
      expect(quiet.stderr()).not.toContain('wrong-token-0123456789');
    } finally {
      await quiet.stop();
    }
  });
});

interface Spawned {
  proc: ChildProcess;
  until(re: RegExp): Promise<string>;
  stop(): Promise<void>;
}

function spawnServer(args: string[], env: Record<string, string>, cwd: string): Spawned {
  const proc = spawn(process.execPath, [BIN, ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  proc.stderr?.on('data', (c: Buffer) => (err += c.toString()));
  const exited = new Promise<void>((r) => proc.once('exit', () => r()));
  return {
    proc,
    async until(re) {
      const ok = await waitFor(() => re.test(err) || proc.exitCode !== null);
      if (!ok || !re.test(err)) throw new Error(`server never printed ${re}:\n${err}`);
      return err;
    },
    async stop() {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
      await exited;
    },
  };
}
