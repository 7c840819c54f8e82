// The runtime directory of a root server cannot be squatted (README "Configuration", SERVICE_RUNTIME_ROOT;
// src/process/runtime-dir.ts). Another user (nobody) who can write the runtime root — a 1777 directory, like
// /tmp — plants `<root>/workbench-mcp` before the server starts: a 0777 directory of theirs holding, for the
// server's instance directory, a `tmp` symlink to a directory of root's; or a symlink in place of
// `<root>/workbench-mcp`. The server must refuse to start with a message naming the squatted path, or (for
// the first case) start with a runtime directory the squatter cannot touch: nothing a command writes to
// /tmp may land in root's directory. And without SERVICE_RUNTIME_ROOT a root server's runtime directory is
// not under TMPDIR (it is /run/workbench-mcp). The instance directory is named after the server's pid, so the
// server is started stopped just before exec (hostile-bin's beforeStart) and the plant is made for that pid:
// no race with the start.
import { createHash, randomBytes } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  lchownSync,
  mkdirSync,
  mkdtempSync,
  realpathSync,
  rmSync,
  symlinkSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../exec/exec-support.js';
import { canRunAs, NOBODY, startOrRefusal, type StartOutcome } from '../helpers/hostile-bin.js';
import { makeWorkspace, type TempWorkspace } from '../helpers/workspace.js';

const enabled = canRunAs('root', 'the runtime directory squatting attacks');

/** A directory or symlink made as nobody would make it (owned by 65534). */
function asNobody(p: string, kind: { dir: number } | { linkTo: string }): string {
  if ('dir' in kind) {
    mkdirSync(p);
    chmodSync(p, kind.dir);
  } else symlinkSync(kind.linkTo, p);
  lchownSync(p, NOBODY, NOBODY);
  return p;
}

/** The refusal must name the squatted path; a start is reported so the caller can stop the server. */
async function expectRefused(o: StartOutcome, squatted: string): Promise<void> {
  if (o.kind === 'ready') {
    await o.server.stop();
    throw new Error(
      `the server started although ${squatted} is squatted: ${o.server.stderr().slice(0, 600)}`,
    );
  }
  expect(o.code, o.stderr).not.toBe(0);
  expect(o.stderr).toContain(squatted);
}

describe.runIf(enabled)('a squatted runtime directory (server as root)', () => {
  const tag = randomBytes(4).toString('hex');
  const made: string[] = [];
  let ws: TempWorkspace;
  let target: string; // root's directory the squatter wants root to write into (a stand-in for /etc)
  const runtimeRoot = () => {
    const r = mkdtempSync(path.join(tmpdir(), 'wb-rtroot-'));
    chmodSync(r, 0o1777);
    made.push(r);
    return r;
  };

  beforeAll(() => {
    ws = makeWorkspace({ 'a.txt': 'a\n' });
    target = mkdtempSync(path.join(tmpdir(), 'wb-rt-target-'));
    chmodSync(target, 0o755);
    made.push(target);
  });
  afterAll(() => {
    for (const p of made) rmSync(p, { recursive: true, force: true });
    ws?.cleanup();
  });

  it("<root>/workbench-mcp made 0777 by nobody, its instance directory a `tmp` symlink to root's directory: refused, or nothing lands there", async () => {
    const root = runtimeRoot();
    const squat = asNobody(path.join(root, 'workbench-mcp'), { dir: 0o777 });
    const hash = createHash('sha256').update(realpathSync(ws.dir)).digest('hex').slice(0, 16);
    const perWs = asNobody(path.join(squat, hash), { dir: 0o777 });
    const o = await startOrRefusal({
      workspace: ws.dir,
      as: 'root',
      runtimeRoot: root,
      beforeStart: (pid) => {
        const inst = asNobody(path.join(perWs, String(pid)), { dir: 0o777 });
        asNobody(path.join(inst, 'tmp'), { linkTo: target });
      },
    });
    if (o.kind === 'exit') {
      expect(o.code, o.stderr).not.toBe(0);
      expect(o.stderr).toContain(squat);
      return;
    }
    try {
      for (const tty of [true, false]) {
        const r = await call(o.server.url, 'exec_command', {
          cmd: `f=/tmp/passwd; echo evil-${tag} >> $f; echo "rc=$?"`,
          tty,
          yield_time_ms: 30_000,
        });
        console.log(`[runtime squat] tty=${tty}: ${JSON.stringify(r.sc.stdout ?? r.sc.error)}`);
      }
      expect(existsSync(path.join(target, 'passwd')), `a command's /tmp write landed in ${target}`).toBe(
        false,
      );
    } finally {
      await o.server.stop();
    }
  });

  it("<root>/workbench-mcp a symlink (to a directory of nobody's): refused with a message naming it", async () => {
    const root = runtimeRoot();
    const elsewhere = asNobody(path.join(root, `elsewhere-${tag}`), { dir: 0o777 });
    const squat = asNobody(path.join(root, 'workbench-mcp'), { linkTo: elsewhere });
    const o = await startOrRefusal({ workspace: ws.dir, as: 'root', runtimeRoot: root });
    await expectRefused(o, squat);
  });

  it('without SERVICE_RUNTIME_ROOT a root server keeps its runtime directory out of TMPDIR, in /run/workbench-mcp', async () => {
    const tmp = mkdtempSync(path.join(tmpdir(), 'wb-tmpdir-'));
    chmodSync(tmp, 0o1777);
    made.push(tmp);
    const o = await startOrRefusal({ workspace: ws.dir, as: 'root', env: { TMPDIR: tmp } });
    if (o.kind === 'exit') throw new Error(`the server did not start: ${o.stderr}`);
    try {
      const env = await call(o.server.url, 'check_exec_environment');
      const dirs = env.sc.runtime_dirs as Record<string, string>;
      for (const d of Object.values(dirs))
        expect(d.startsWith(`${tmp}/`), `${d} is under TMPDIR`).toBe(false);
      expect(dirs.root).toMatch(/^\/run\/workbench-mcp\//);
    } finally {
      await o.server.stop();
    }
  });
});
