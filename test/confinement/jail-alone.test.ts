// ripgrep runs in a jail of its own directory and the directory searched, bound from the descriptor the server
// holds open (src/process/jail/jail.ts wrapAlone; docs/security-model.md, rule A): nothing else exists for it, so a
// page of its matches is the answer without re-reading the files. A program that needs the system (not static)
// gets the jail with the system's files. Needs bubblewrap (skipped with the reason elsewhere, a failure under
// CI=true).
import { spawnSync } from 'node:child_process';
import { closeSync, constants, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isStaticExecutable, ToolJail, type Jailed } from '../../src/process/jail/jail.js';
import { createRuntimeDirs } from '../../src/process/runtime-dir.js';
import { findRipgrep } from '../../src/workspace/search/engines.js';
import { makeWorkspace, type TempWorkspace } from '../helpers/workspace.js';
import { needBwrap } from '../exec/exec-support.js';

function run(j: Jailed, cwd: string) {
  const fd = j.seccomp ? openSync(j.seccomp, constants.O_RDONLY) : undefined;
  try {
    const stdio = ['ignore', 'pipe', 'pipe', fd ?? 'ignore', ...(j.fds ?? [])];
    return spawnSync(j.file, j.args, { cwd, stdio: stdio as never, encoding: 'utf8' });
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** The directory held open, as the search holds its base. */
function held(dir: string): number {
  return openSync(dir, constants.O_RDONLY | constants.O_DIRECTORY);
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
    ws = makeWorkspace({ 'inside.txt': 'root:inside\n', 'sub/deeper.txt': 'root:deeper\n' });
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

  it('finds what is in the directory it is given, and nothing else exists for it', () => {
    if (!isStaticExecutable(rgPath)) {
      if (process.env.CI === 'true') throw new Error(`ripgrep at ${rgPath} is not static`);
      console.log(`SKIP: ripgrep at ${rgPath} is not a static executable`);
      return;
    }
    expect(jail.runsAlone(rgPath)).toBe(true);
    const sub = held(path.join(ws.dir, 'sub'));
    const root = held(ws.dir);
    try {
      const inside = run(jail.wrapAlone(rgPath, ['--no-config', '-l', '^root:', '.'], ws.dir, root), ws.dir);
      expect(inside.status, inside.stderr).toBe(0);
      expect(inside.stdout.split('\n').sort()).toEqual(['', './inside.txt', './sub/deeper.txt']);
      // Given the subdirectory, the rest of the workspace does not exist either.
      const below = run(jail.wrapAlone(rgPath, ['--no-config', '-l', '^root:', '.'], ws.dir, sub), ws.dir);
      expect(below.stdout).toBe('./deeper.txt\n');
      const up = run(jail.wrapAlone(rgPath, ['--no-config', '-l', '', '../inside.txt'], ws.dir, sub), ws.dir);
      expect(up.stdout).toBe('');
      for (const outside of ['/etc/passwd', '/usr', '/root', '/proc/self/environ', rt, ws.dir]) {
        const r = run(jail.wrapAlone(rgPath, ['--no-config', '-l', '', outside], ws.dir, root), ws.dir);
        expect(r.stdout, outside).toBe('');
        expect(r.status, outside).toBe(2);
      }
    } finally {
      closeSync(sub);
      closeSync(root);
    }
    // The jail with the system's files, for comparison: there /etc/passwd is readable.
    const full = run(jail.wrap(rgPath, ['--no-config', '-l', '^root:', '/etc/passwd'], ws.dir), ws.dir);
    expect(full.stdout).toBe('/etc/passwd\n');
  });

  it('a program that needs the system gets the jail with its files', () => {
    expect(jail.runsAlone('/bin/sh')).toBe(false);
    const root = held(ws.dir);
    try {
      const r = run(jail.wrapAlone('/bin/sh', ['-c', 'echo ok; ls /usr/bin/env'], ws.dir, root), ws.dir);
      expect(r.stdout).toBe('ok\n/usr/bin/env\n');
    } finally {
      closeSync(root);
    }
  });
});
