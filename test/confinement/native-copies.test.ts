// The native programs that run outside every sandbox, or set one up, run from copies the server made in its
// runtime directory's root (src/process/native.ts), never from dist/: the server may be installed inside the
// workspace it serves, where a sandboxed command could replace a built file (docs/security-model.md, rule B).
// A real server, a real listing, the real wb-stat process.
import { readFileSync, readlinkSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtProgram, placeProgram } from '../../src/process/native.js';
import { descendantsOf } from '../helpers/hostile-bin.js';
import { needBuilt } from '../helpers/native.js';
import { callTool } from '../helpers/rpc.js';
import { startInProcess, type InProcessServer } from '../helpers/server.js';
import { makeWorkspace, type TempWorkspace } from '../helpers/workspace.js';

const built = builtProgram('wb-stat');

let ws: TempWorkspace;
let srv: InProcessServer;

beforeAll(async () => {
  ws = makeWorkspace();
  for (let i = 0; i < 20; i++) ws.write(`src/f${i}.txt`, 'x'.repeat(i));
  srv = await startInProcess({ workspace: ws.dir });
});
afterAll(async () => {
  await srv?.close();
  ws?.cleanup();
});

describe('native programs run from the runtime directory', () => {
  it("list_files' wb-stat is the copy in the runtime directory's root, not dist/", async () => {
    if (!needBuilt(['wb-stat'], 'wb-stat copy')) return;
    const r = await callTool(srv.url, 'list_files', {});
    expect(r.structuredContent.files).toHaveLength(20);
    const helper = descendantsOf(process.pid).find((p) => p.cmdline.split(' ')[0]?.endsWith('/wb-stat'));
    expect(helper, 'a wb-stat process below the server').toBeDefined();
    const exe = readlinkSync(`/proc/${helper?.pid}/exe`);
    expect(path.dirname(exe)).toBe(srv.runtime.dirs.root);
    expect(exe).not.toBe(built);
  });

  it('a copy is private (0500), equal to the build, made once, and made again when it is gone', () => {
    if (!needBuilt(['wb-stat'], 'placeProgram')) return;
    const dir = srv.runtime.dirs.root;
    const at = placeProgram('wb-stat', dir) as string;
    expect(at).toBe(path.join(dir, 'wb-stat'));
    expect(statSync(at).mode & 0o777).toBe(0o500);
    expect(readFileSync(at).equals(readFileSync(built as string))).toBe(true);
    expect(placeProgram('wb-stat', dir)).toBe(at);
    rmSync(at);
    expect(placeProgram('wb-stat', dir)).toBe(at);
    expect(statSync(at).mode & 0o777).toBe(0o500);
    expect(placeProgram('no-such-program', dir)).toBeUndefined();
  });
});
