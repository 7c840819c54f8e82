// The server installed inside the workspace it serves (a devDependency: node_modules/workbench-mcp), where a
// sandboxed command can rewrite the server's own files: nothing it rewrites runs outside the sandbox
// (docs/security-model.md, rule B). The server loads all of its code with the tool modules, before its first
// tool call runs (tools/lazy-catalog.ts), forks the spawner helper from a private copy in its runtime directory
// (process/spawner/spawner.ts), runs its native programs from copies (process/native.ts) and reads the console's page
// once. A command here rewrites every script of the installed package and of the libraries the server would
// load late (the PTY library, prom-client) so that each, when loaded, writes a marker file outside the
// workspace; then every late path is taken (a search, a tty command, the console's script, a scrape of
// /metrics, a killed helper replaced). No marker, and the console serves the script it read at start. A second server started from the rewritten package does write it: the
// rewritten files are code that would have run.
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, pollUntil } from '../exec/exec-support.js';
import {
  canRunAs,
  descendantsOf,
  NOBODY,
  ownedDir,
  startBinAs,
  type BinServer,
  type RunAs,
} from '../helpers/hostile-bin.js';
import { TEST_TOKEN } from '../helpers/server.js';
import { consoleLink } from '../console/support.js';
import { until } from '../helpers/raw-http.js';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
/** Libraries the server loads by name at run time, copied so the command can rewrite them (the rest are links). */
const COPIED = ['@lydell', 'prom-client'];

/** Rewrites, inside the sandbox, every script of the installed package and of the copied libraries. */
const ATTACK = String.raw`
import os, sys
marker = sys.argv[1]
n = 0
def esm(p):
    src = open(p).read()
    head = ""
    if src.startswith("#!"):
        head, _, src = src.partition("\n")
        head += "\n"
    open(p, "w").write(head + 'import { writeFileSync as __wbOwn } from "node:fs";\n' + src + "\n__wbOwn(%r, %r);\n" % (marker, p))
def cjs(p):
    with open(p, "a") as f:
        f.write("\nrequire('fs').writeFileSync(%r, %r);\n" % (marker, p))
for base, kind in (("node_modules/workbench-mcp/dist", "esm"), ("node_modules/@lydell", "cjs"), ("node_modules/prom-client", "cjs")):
    for d, _, files in os.walk(base):
        for f in files:
            p = os.path.join(d, f)
            if f.endswith(".mjs") or (f.endswith(".js") and kind == "esm"): esm(p); n += 1
            elif f.endswith(".js"): cjs(p); n += 1
            elif os.sep + "native" + os.sep in p:
                open(p, "w").write("#!/bin/sh\necho native > %s\n" % marker); n += 1
print("rewrote", n)
`;

describe.each(['root', 'nobody'] as const)('server as %s', (as) => {
  const d = canRunAs(as, 'the own-code attack test') ? describe : describe.skip;
  d('the server installed inside its workspace runs none of the files a command rewrites', () => suite(as));
});

function suite(as: RunAs): void {
  const tag = randomBytes(4).toString('hex');
  const marker = path.join(tmpdir(), `wb-own-code-${tag}`);
  let ws: string;
  let rt: string;
  let bin: string;
  let srv: BinServer;
  let state: string;

  beforeAll(async () => {
    ws = ownedDir(tmpdir(), 'wb-own-code-ws-', as);
    rt = ownedDir(tmpdir(), 'wb-own-code-rt-', as);
    chmodSync(rt, 0o700);
    mkdirSync(path.join(ws, 'node_modules'));
    // As `npm install -D workbench-mcp` lays it out: the package, and its dependencies beside it.
    const pkg = path.join(ws, 'node_modules', 'workbench-mcp');
    mkdirSync(pkg);
    cpSync(path.join(REPO, 'package.json'), path.join(pkg, 'package.json'));
    cpSync(path.join(REPO, 'dist'), path.join(pkg, 'dist'), { recursive: true });
    for (const name of readdirSync(path.join(REPO, 'node_modules'))) {
      const from = path.join(REPO, 'node_modules', name);
      const to = path.join(ws, 'node_modules', name);
      if (COPIED.includes(name)) cpSync(from, to, { recursive: true, dereference: true });
      else if (!name.startsWith('.')) symlinkSync(from, to);
    }
    writeFileSync(path.join(ws, 'attack.py'), ATTACK);
    writeFileSync(path.join(ws, 'notes.txt'), 'a needle in the workspace\n');
    bin = path.join(pkg, 'dist', 'cli', 'main.js');
    // The workspace is the server's user's (commands write it); the links themselves, not what they name.
    if (as === 'nobody') execFileSync('chown', ['-R', '-h', '-P', `${NOBODY}:${NOBODY}`, ws]);
    // A state directory, so the operator's console runs (its page is read once, at start).
    state = ownedDir(tmpdir(), 'wb-own-code-state-', as);
    chmodSync(state, 0o700);
    srv = await startBinAs({ workspace: ws, runtimeRoot: rt, as, bin, env: { SERVICE_STATE_DIR: state } });
  });
  afterAll(async () => {
    await srv?.stop();
    for (const p of [ws, rt, state, marker, `${rt}-2`]) if (p) rmSync(p, { recursive: true, force: true });
  });

  /** Nothing the command wrote has run so far (checked after each late path, so a failure names it). */
  const noneRan = (after: string) =>
    expect(existsSync(marker), `${after}: ${existsSync(marker) ? readFileSync(marker, 'utf8') : ''}`).toBe(
      false,
    );

  it('a command rewrites the installed package and the late libraries; every late path runs none of it', async () => {
    // The first tool call: from here on the server loads no code.
    const info = await call(srv.url, 'server_info');
    expect(info.isError).toBeFalsy();
    const attack = await call(srv.url, 'exec_command', {
      cmd: `python3 attack.py ${marker}`,
      yield_time_ms: 30_000,
    });
    expect(attack.sc.exit_code, attack.sc.stderr).toBe(0);
    expect(Number(/rewrote (\d+)/.exec(attack.sc.stdout)?.[1])).toBeGreaterThan(50);
    expect(readFileSync(bin, 'utf8')).toContain('__wbOwn');

    // Both search paths' code, the listings, a patch.
    for (const [tool, args] of [
      ['search_text', { query: 'needle' }],
      ['search_text', { query: 'ne+dle', regex: true }],
      ['list_files', {}],
      ['list_dir', { path: '.' }],
      ['read_file', { path: 'notes.txt' }],
      ['apply_patch', { patch: '*** Begin Patch\n*** Add File: added.txt\n+x\n*** End Patch' }],
    ] as const) {
      const r = await call(srv.url, tool, args);
      expect(r.isError, `${tool}: ${r.text}`).toBeFalsy();
      noneRan(tool);
    }
    // A terminal (the PTY library).
    const tty = await call(srv.url, 'exec_command', {
      cmd: 'echo on-a-tty',
      tty: true,
      yield_time_ms: 10_000,
    });
    const out = await pollUntil(srv.url, tty.sc.command_id, /on-a-tty/, '', tty.sc.stdout ?? '');
    expect(out.stdout).toContain('on-a-tty');
    noneRan('a tty command');
    // The console's script, as the operator's browser would get it: the one read at start, not the rewritten one.
    const link = new URL(consoleLink(srv.stderr()));
    const opened = await fetch(link, { redirect: 'manual' });
    expect(opened.status).toBe(303);
    const cookie = String(opened.headers.get('set-cookie')).split(';')[0] as string;
    const script = await fetch(new URL('/app.js', link), { headers: { cookie } });
    expect(script.status).toBe(200);
    const served = await script.text();
    expect(served.length).toBeGreaterThan(100);
    expect(served).not.toContain('__wbOwn');
    expect(
      readFileSync(path.join(ws, 'node_modules/workbench-mcp/dist/console/page/app.js'), 'utf8'),
    ).toContain('__wbOwn');
    // A scrape of /metrics (prom-client).
    const metrics = await fetch(new URL('/metrics', srv.url), {
      headers: { authorization: `Bearer ${TEST_TOKEN}` },
    });
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toContain('# TYPE');
    noneRan('a scrape of /metrics');
    // The spawner helper killed: its replacement is forked from the private copy, not from the workspace.
    const helpers = () => descendantsOf(srv.pid).filter((p) => p.cmdline.includes('spawner-main'));
    const first = helpers();
    expect(first.length).toBe(1);
    const dead = first[0]?.pid as number;
    process.kill(dead, 'SIGKILL');
    // Reaped by the server (its exit handled, so the next command finds it gone and starts a replacement).
    await until(
      async () => existsSync(`/proc/${dead}`),
      (alive) => !alive,
    );
    const after = await call(srv.url, 'exec_command', { cmd: 'echo after-helper', yield_time_ms: 30_000 });
    expect(after.sc.stdout, JSON.stringify(after)).toContain('after-helper');
    noneRan('the helper replaced');
    const next = await until(
      async () => helpers().filter((p) => p.pid !== dead),
      (list) => list.length === 1,
    );
    expect(next[0]?.cmdline).toContain(`${rt}/`);
    expect(next[0]?.cmdline).not.toContain(ws);
  });

  it('control: a server started from the rewritten package runs it (the rewritten files were live code)', async () => {
    mkdirSync(`${rt}-2`, { mode: 0o700 });
    if (as === 'nobody') chownSync(`${rt}-2`, NOBODY, NOBODY);
    const second = await startBinAs({ workspace: ws, runtimeRoot: `${rt}-2`, as, bin });
    try {
      expect(existsSync(marker)).toBe(true);
    } finally {
      await second.stop();
    }
  });
}
