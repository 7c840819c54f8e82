// Credentials that survive a restart (README "Connecting clients", docs/configuration.md "Kept credentials"):
// the generated bearer token is kept in $XDG_STATE_HOME/workbench-mcp/<workspace id>/ (0700, files 0600),
// printed only when made, reused by the next start — so a client configured once still connects — shown by
// `token show`, replaced by `token rotate` (a running server refuses the old one from then on); a variable
// still overrides, SERVICE_STATE_DIR=off keeps nothing, and an unsafe state directory stops the start (exit 2).
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../exec/exec-support.js';
import { bearer, request, send } from '../helpers/raw-http.js';
import { BIN, startServer, type SpawnedServer } from '../helpers/server.js';
import { makeWorkspace, type TempWorkspace } from '../helpers/workspace.js';
import { workspaceId } from '../../src/state/state-dir.js';

let ws: TempWorkspace;
let dir: string;
let xdg: string;
const running: SpawnedServer[] = [];

beforeAll(() => {
  ws = makeWorkspace({ 'a.txt': 'alpha\n' });
  dir = mkdtempSync(path.join(tmpdir(), 'wb-kept-'));
  xdg = path.join(dir, 'state');
  mkdirSync(xdg);
});
afterAll(async () => {
  for (const s of running) await s.stop();
  ws?.cleanup();
  rmSync(dir, { recursive: true, force: true });
});

/** The environment of a user with no token configured, whose XDG state directory is `stateHome`. */
function userEnv(stateHome = xdg, extra: Record<string, string> = {}): Record<string, string> {
  return {
    HOME: path.join(dir, 'home'),
    XDG_STATE_HOME: stateHome,
    SERVICE_AUTH_TOKEN: '',
    SERVICE_STATE_DIR: '',
    ...extra,
  };
}

async function start(env: Record<string, string>, workspace = ws.dir): Promise<SpawnedServer> {
  const s = await startServer({ workspace, env });
  running.push(s);
  return s;
}

function bin(args: string[], env: Record<string, string>) {
  const r = spawnSync(process.execPath, [BIN, ...args], {
    env: { PATH: process.env.PATH ?? '', ...env },
    encoding: 'utf8',
    timeout: 60_000, // only ends a hung run
  });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

const printed = (err: string) => /^ {4}([A-Za-z0-9_-]{43})$/m.exec(err)?.[1];
const ping = async (url: string, token: string) =>
  (await send(url, request('handshake', 'tools/list'), bearer(token))).status;

describe('the kept bearer token', () => {
  it('is made once (0700 directory, 0600 files), shown only then, and reused after a restart', async () => {
    const first = await start(userEnv());
    const token = printed(first.stderr()) as string;
    expect(token, first.stderr()).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(first.stderr()).toContain(
      'generated a bearer token and kept it for this workspace (the show command below prints it again)',
    );
    const stateDir = path.join(xdg, 'workbench-mcp', workspaceId(ws.dir));
    const file = path.join(stateDir, 'bearer-token');
    expect(first.stderr()).toContain(`Kept in ${file}`);
    expect(statSync(path.join(xdg, 'workbench-mcp')).mode & 0o777).toBe(0o700);
    expect(statSync(stateDir).mode & 0o777).toBe(0o700);
    for (const f of readdirSync(stateDir)) expect(statSync(path.join(stateDir, f)).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, 'utf8')).toBe(token + '\n');
    expect(readFileSync(path.join(stateDir, 'workspace'), 'utf8')).toBe(ws.dir + '\n');
    expect(await ping(first.url, token)).toBe(200);
    expect(await first.stop()).toBe(0);

    // The client configured once (it holds `token`) still connects after a restart, and nothing prints it.
    const second = await start(userEnv());
    expect(await ping(second.url, token)).toBe(200);
    expect(second.stderr()).not.toContain(token);
    expect(second.stderr()).toMatch(
      new RegExp(
        `bearer token: the one kept for this workspace in ${file.replace(/[.]/g, '\\.')} \\(show it: .* token show --workspace `,
      ),
    );
    await second.stop();

    // `token show` prints it alone on stdout.
    const shown = bin(['token', 'show', '--workspace', ws.dir], userEnv());
    expect(shown).toMatchObject({ code: 0, out: token + '\n' });
  });

  it('token rotate: a new token, printed once; the running server refuses the old one from then on, and so does the next start', async () => {
    const other = makeWorkspace({ 'b.txt': 'beta\n' });
    try {
      const s = await start(userEnv(xdg, { SERVICE_LOG_LEVEL: 'info' }), other.dir);
      const old = printed(s.stderr()) as string;
      expect(await ping(s.url, old)).toBe(200);
      const r = bin(['token', 'rotate', '--workspace', other.dir], userEnv());
      expect(r.code, r.err).toBe(0);
      const fresh = r.out.trim();
      expect(fresh).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(fresh).not.toBe(old);
      expect(r.err).toContain('the old one is refused from now on');
      // Not "shown only now": `token show` prints it again.
      expect(r.err).toContain('(printed below; `token show` prints it again)');
      expect(r.err).not.toContain('only now');
      expect(bin(['token', 'show', '--workspace', other.dir], userEnv()).out.trim()).toBe(fresh);
      expect(r.err).not.toContain(fresh);
      // The server says when it picked the new one up (an inotify event, not a poll).
      expect(await waitFor(() => /the kept bearer token in .* was replaced/.test(s.stderr()))).toBe(true);
      expect(await ping(s.url, old)).toBe(401);
      expect(await ping(s.url, fresh)).toBe(200);
      await s.stop();
      const again = await start(userEnv(), other.dir);
      expect(await ping(again.url, old)).toBe(401);
      expect(await ping(again.url, fresh)).toBe(200);
      expect(again.stderr()).not.toContain(fresh);
      await again.stop();
    } finally {
      other.cleanup();
    }
  });

  it('a variable still overrides; SERVICE_STATE_DIR=off keeps nothing and makes a token per run', async () => {
    const state = path.join(dir, 'state-override');
    const configured = 'configured-token-0123456789';
    const s = await start(userEnv(state, { SERVICE_AUTH_TOKEN: configured }));
    expect(await ping(s.url, configured)).toBe(200);
    expect(s.stderr()).not.toMatch(/bearer token/);
    await s.stop();
    // Only the console's link key was kept (removed at shutdown), never a token.
    expect(keptNames(path.join(state, 'workbench-mcp'))).toEqual(['workspace']);

    const tokens: string[] = [];
    for (let i = 0; i < 2; i++) {
      const off = await start(userEnv(state, { SERVICE_STATE_DIR: 'off' }));
      expect(off.stderr()).toContain('generated a bearer token for this run (shown once)');
      expect(off.stderr()).toContain('(nothing is kept: SERVICE_STATE_DIR=off)');
      tokens.push(printed(off.stderr()) as string);
      await off.stop();
    }
    expect(tokens[0]).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(tokens[0]).not.toBe(tokens[1]);
    expect(keptNames(path.join(state, 'workbench-mcp'))).toEqual(['workspace']);
  });

  it('SERVICE_STATE_DIR names the directory; without XDG_STATE_HOME the default is ~/.local/state', async () => {
    const chosen = path.join(dir, 'chosen');
    const s = await start(userEnv(xdg, { SERVICE_STATE_DIR: chosen }));
    const token = printed(s.stderr()) as string;
    await s.stop();
    expect(readFileSync(path.join(chosen, workspaceId(ws.dir), 'bearer-token'), 'utf8')).toBe(token + '\n');
    const home = path.join(dir, 'home2');
    mkdirSync(home);
    const h = await start({ HOME: home, SERVICE_AUTH_TOKEN: '', SERVICE_STATE_DIR: '' });
    const t2 = printed(h.stderr()) as string;
    await h.stop();
    const file = path.join(home, '.local/state/workbench-mcp', workspaceId(ws.dir), 'bearer-token');
    expect(readFileSync(file, 'utf8')).toBe(t2 + '\n');
  });

  it('token show with nothing kept exits 1 and says how to make one; bad actions exit 2', () => {
    const empty = path.join(dir, 'state-empty');
    const r = bin(['token', 'show', '--workspace', ws.dir], userEnv(empty));
    expect(r.code).toBe(1);
    expect(r.out).toBe('');
    expect(r.err).toMatch(/no bearer token is kept for .* yet.* token rotate/);
    expect(existsSync(path.join(empty, 'workbench-mcp'))).toBe(false); // looking made nothing
    expect(bin(['token'], userEnv(empty)).code).toBe(2);
    expect(bin(['token', 'reveal'], userEnv(empty)).code).toBe(2);
    expect(
      bin(['token', 'show', '--workspace', ws.dir], userEnv(empty, { SERVICE_STATE_DIR: 'off' })).code,
    ).toBe(2);
    expect(bin(['token', '--help'], userEnv(empty))).toMatchObject({ code: 0 });
  });
});

describe('an unsafe state directory stops the start (exit 2, one line naming it)', () => {
  const refused = (env: Record<string, string>) =>
    bin(['--workspace', ws.dir, '--port', '0'], { ...userEnv(), ...env });

  it('a symbolic link, a group-writable directory, a file others can read, one owned by someone else', () => {
    const root = (name: string) => path.join(dir, `unsafe-${name}`);
    const target = root('target');
    mkdirSync(target, { mode: 0o700 });
    symlinkSync(target, root('link'));
    let r = refused({ SERVICE_STATE_DIR: root('link') });
    expect(r.code, r.err).toBe(2);
    expect(r.err.trim().split('\n')).toEqual([
      expect.stringMatching(/state directory .*unsafe-link is a symbolic link/),
    ]);

    mkdirSync(root('gw'));
    chmodSync(root('gw'), 0o770);
    r = refused({ SERVICE_STATE_DIR: root('gw') });
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/unsafe-gw is writable by other users \(mode 770\)/);

    const readable = root('readable');
    const wsDir = path.join(readable, workspaceId(ws.dir));
    mkdirSync(wsDir, { recursive: true, mode: 0o700 });
    chmodSync(readable, 0o700);
    writeFileSync(path.join(wsDir, 'bearer-token'), 'x'.repeat(43) + '\n', { mode: 0o644 });
    r = refused({ SERVICE_STATE_DIR: readable });
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/bearer-token can be read or written by other users \(mode 644\)/);

    if (process.getuid?.() === 0) {
      mkdirSync(root('theirs'), { mode: 0o700 });
      chownSync(root('theirs'), 65534, 65534);
      r = refused({ SERVICE_STATE_DIR: root('theirs') });
      expect(r.code).toBe(2);
      expect(r.err).toMatch(/unsafe-theirs belongs to uid 65534, not to you/);
    }
  });

  it('a relative SERVICE_STATE_DIR is refused; a missing HOME keeps nothing instead of failing', async () => {
    const r = refused({ SERVICE_STATE_DIR: 'relative/dir' });
    expect(r.code).toBe(2);
    expect(r.err).toContain('SERVICE_STATE_DIR must be an absolute path or off');
    const s = await start({
      HOME: path.join(dir, 'no-such-home'),
      XDG_STATE_HOME: '',
      SERVICE_AUTH_TOKEN: '',
      SERVICE_STATE_DIR: '',
    });
    expect(s.stderr()).toMatch(
      /generated a bearer token for this run .*\n[\s\S]*nothing is kept: HOME .*no-such-home is not a directory/,
    );
    await s.stop();
    expect(existsSync(path.join(dir, 'no-such-home'))).toBe(false);
  });
});

/** The names of the files kept under a state root (every workspace directory), sorted. */
function keptNames(root: string): string[] {
  if (!existsSync(root)) return [];
  const names = readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile())
    .map((d) => d.name);
  return [...new Set(names)].sort();
}
