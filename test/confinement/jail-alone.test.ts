// ripgrep runs in a jail of its own directory and the workspace alone (src/process/jail.ts wrapAlone;
// docs/security-model.md, rule A): nothing outside the workspace exists for it, so a page of its matches is
// the answer without re-reading the files. A program that needs the system (not static) gets the jail with the
// system's files. Needs bubblewrap (skipped with the reason elsewhere, a failure under CI=true).
import { spawnSync } from 'node:child_process';
import { closeSync, constants, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isStaticExecutable, ToolJail, type Jailed } from '../../src/process/jail.js';
import { createRuntimeDirs } from '../../src/process/runtime-dir.js';
import { findRipgrep } from '../../src/workspace/search/engines.js';
import { makeWorkspace, type TempWorkspace } from '../helpers/workspace.js';
import { needBwrap } from '../exec/exec-support.js';

function run(j: Jailed, cwd: string) {
  const fd = j.seccomp ? openSync(j.seccomp, constants.O_RDONLY) : undefined;
  try {
    const stdio = fd === undefined ? 'pipe' : ['ignore', 'pipe', 'pipe', fd];
    return spawnSync(j.file, j.args, { cwd, stdio: stdio as never, encoding: 'utf8' });
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

const rg = findRipgrep(process.env as Record<string, string>);
const d = needBwrap('the jail of the workspace alone') && rg.kind === 'ripgrep' ? describe : describe.skip;

describe('which programs need nothing of the system', () => {
  it('a static ELF executable does not; a dynamically linked one or a script does', () => {
    // @vscode/ripgrep ships a static build.
    if (rg.kind === 'ripgrep' && rg.source === 'bundled') expect(isStaticExecutable(rg.path)).toBe(true);
    expect(isStaticExecutable('/bin/sh')).toBe(false);
    const dir = mkdtempSync(path.join(tmpdir(), 'wb-static-'));
    writeFileSync(path.join(dir, 'script'), '#!/bin/sh\ntrue\n');
    writeFileSync(path.join(dir, 'short'), '\x7fELF');
    expect(isStaticExecutable(path.join(dir, 'script'))).toBe(false);
    expect(isStaticExecutable(path.join(dir, 'short'))).toBe(false);
    expect(isStaticExecutable(path.join(dir, 'missing'))).toBe(false);
    rmSync(dir, { recursive: true, force: true });
  });
});

d('ripgrep in a jail of the workspace alone', () => {
  let ws: TempWorkspace;
  let rt: string;
  let jail: ToolJail;
  const rgPath = rg.kind === 'ripgrep' ? rg.path : '';

  beforeAll(() => {
    ws = makeWorkspace({ 'inside.txt': 'root:inside\n' });
    rt = mkdtempSync(path.join(tmpdir(), 'wb-alone-rt-'));
    jail = new ToolJail({
      requested: 'auto',
      pathVar: process.env.PATH,
      workspaceReal: ws.dir,
      dirs: createRuntimeDirs({ configured: rt }, ws.dir),
      privateFiles: [],
    });
  });

  afterAll(() => {
    ws?.cleanup();
    if (rt) rmSync(rt, { recursive: true, force: true });
  });

  it('finds what is in the workspace, and nothing of the host exists for it', () => {
    if (!isStaticExecutable(rgPath)) {
      if (process.env.CI === 'true') throw new Error(`ripgrep at ${rgPath} is not static`);
      console.log(`SKIP: ripgrep at ${rgPath} is not a static executable`);
      return;
    }
    expect(jail.runsAlone(rgPath)).toBe(true);
    const inside = run(jail.wrapAlone(rgPath, ['--no-config', '-l', '^root:', '.'], ws.dir), ws.dir);
    expect(inside.status, inside.stderr).toBe(0);
    expect(inside.stdout).toBe('./inside.txt\n');
    for (const outside of ['/etc/passwd', '/usr', '/root', '/proc/self/environ', rt]) {
      const r = run(jail.wrapAlone(rgPath, ['--no-config', '-l', '', outside], ws.dir), ws.dir);
      expect(r.stdout, outside).toBe('');
      expect(r.status, outside).toBe(2);
    }
    // Above the workspace there are only the directories that lead to it.
    const above = run(jail.wrapAlone(rgPath, ['--no-config', '-l', '', '/'], ws.dir), ws.dir);
    expect(above.stdout).toBe(`${path.join(ws.dir, 'inside.txt')}\n`);
    // The jail with the system's files, for comparison: there /etc/passwd is readable.
    const full = run(jail.wrap(rgPath, ['--no-config', '-l', '^root:', '/etc/passwd'], ws.dir), ws.dir);
    expect(full.stdout).toBe('/etc/passwd\n');
  });

  it('a program that needs the system gets the jail with its files', () => {
    expect(jail.runsAlone('/bin/sh')).toBe(false);
    const r = run(jail.wrapAlone('/bin/sh', ['-c', 'echo ok'], ws.dir), ws.dir);
    expect(r.stdout).toBe('ok\n');
  });
});
