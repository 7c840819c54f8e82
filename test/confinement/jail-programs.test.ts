// process/jail/programs.ts: a program found on PATH once is found again with one check, and searched again
// once it is gone from there; its directory is bound only when the system directories do not show it.
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ProgramPaths } from '../../src/process/jail/programs.js';

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

function tool(at: string, name: string): string {
  mkdirSync(at, { recursive: true });
  const p = path.join(at, name);
  writeFileSync(p, '#!/bin/sh\n');
  chmodSync(p, 0o755);
  return p;
}

describe('ProgramPaths', () => {
  it('keeps where PATH led while that is an executable, and searches again once it is not', () => {
    dir = mkdtempSync(path.join(tmpdir(), 'wb-programs-'));
    const first = path.join(dir, 'a');
    const second = path.join(dir, 'b');
    const p = new ProgramPaths(`${first}:${second}`);
    expect(p.path('wb-tool')).toBeUndefined();
    const inSecond = tool(second, 'wb-tool');
    expect(p.path('wb-tool'), 'not found before is searched again').toBe(inSecond);
    const inFirst = tool(first, 'wb-tool');
    expect(p.path('wb-tool'), 'kept while it is still there').toBe(inSecond);
    rmSync(inSecond);
    expect(p.path('wb-tool'), 'gone: PATH is searched again').toBe(inFirst);
    expect(p.path('/bin/sh'), 'an absolute path is itself').toBe('/bin/sh');
  });

  it("binds a program's directory only when the system directories do not show it", () => {
    dir = mkdtempSync(path.join(tmpdir(), 'wb-programs-'));
    const own = tool(path.join(dir, 'bin'), 'wb-tool');
    const p = new ProgramPaths(undefined);
    expect(p.dirs(own)).toEqual(['--ro-bind', path.dirname(own), path.dirname(own)]);
    expect(p.dirs('/usr/bin/env')).toEqual([]);
  });
});
