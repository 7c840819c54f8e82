// The `blocked` note for a write the Landlock sandbox refused (src/process/commands/blocked-landlock.ts): named only
// when the command ran under Landlock, the message names an absolute path outside the writable roots, and the
// server's own user could have written there. Real paths in a temp directory; the end-to-end case (a command
// in the simulated container) is in confinement3-landlock-suite.ts.
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NOTE_MAX_BYTES, outputNote, type NoteContext } from '../../src/process/commands/blocked.js';
import { deniedPath } from '../../src/process/commands/blocked-landlock.js';

describe('the blocked note for a Landlock refusal', () => {
  let dir: string;
  let ws: string;
  let ctx: NoteContext;
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'wb-blocked-ll-'));
    ws = path.join(dir, 'ws');
    mkdirSync(ws);
    writeFileSync(path.join(dir, 'file'), '');
    ctx = { mode: 'safe', sandboxed: true, network: 'none', landlock: true, writable: [ws] };
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('reads the refused path from coreutils, sh, dash, bash, Python and Node messages', () => {
    const p = path.join(dir, 'new dir', 'x');
    expect(deniedPath(`touch: cannot touch '${p}': Permission denied`)).toBe(p);
    expect(deniedPath(`mkdir: cannot create directory ‘${p}’: Permission denied`)).toBe(p);
    expect(deniedPath('sh: 1: cannot create /tmp/x: Permission denied')).toBe('/tmp/x');
    expect(deniedPath('bash: line 1: /tmp/x: Permission denied')).toBe('/tmp/x');
    expect(deniedPath(`PermissionError: [Errno 13] Permission denied: '${p}'`)).toBe(p);
    expect(deniedPath(`Error: EACCES: permission denied, open '${p}'`)).toBe(p);
    expect(deniedPath('cp: cannot create regular file x: Permission denied')).toBeUndefined();
    expect(deniedPath('/tmp/x: No such file or directory')).toBeUndefined();
  });

  it('a refused write outside the writable roots, where the server may write, is named', () => {
    for (const target of [path.join(dir, 'file'), path.join(dir, 'new', 'deeper', 'x')]) {
      const n = outputNote(`sh: 1: cannot create ${target}: Permission denied`, ctx);
      expect(n?.what).toBe(target);
      expect(n?.why).toMatch(/Landlock/);
      expect(Buffer.byteLength(JSON.stringify(n))).toBeLessThanOrEqual(NOTE_MAX_BYTES);
    }
    const long = path.join(dir, 'a'.repeat(150), 'x');
    const n = outputNote(`touch: cannot touch '${long}': Permission denied`, ctx);
    expect(Buffer.byteLength(JSON.stringify(n))).toBeLessThanOrEqual(NOTE_MAX_BYTES);
  });

  it('nothing is said: inside the writable roots, a relative path, a path the server could not write either, without Landlock', () => {
    const msg = (p: string) => `touch: cannot touch '${p}': Permission denied`;
    expect(outputNote(msg(path.join(ws, 'x')), ctx)).toBeUndefined();
    expect(outputNote("touch: cannot touch 'x': Permission denied", ctx)).toBeUndefined();
    // Not creatable by anyone: the nearest existing "directory" above is a file.
    expect(outputNote(msg(path.join(dir, 'file', 'x')), ctx)).toBeUndefined();
    const target = path.join(dir, 'file');
    expect(outputNote(msg(target), { ...ctx, landlock: false })).toBeUndefined();
    expect(outputNote(msg(target), { ...ctx, mode: 'dangerous' })).toBeUndefined();
    expect(outputNote(msg(target), { ...ctx, writable: undefined })).toBeUndefined();
    if (process.getuid?.() !== 0) {
      // Not writable by this user: EACCES from the file's mode, not from the sandbox.
      chmodSync(target, 0o444);
      expect(outputNote(msg(target), ctx)).toBeUndefined();
    }
  });
});
