// Assembly, then start (runtime/runtime.ts, docs/architecture.md): building a Runtime starts nothing, so a
// sandbox that cannot run is found by start(), not by the constructor; the CLI starts the runtime before it
// serves, and a refused start removes the runtime directory the assembly made.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { load } from '../../src/config/load.js';
import { silentLogger } from '../../src/core/log.js';
import { SandboxUnavailableError } from '../../src/process/sandbox/sandbox.js';
import { Runtime } from '../../src/runtime/runtime.js';
import { checkRoot } from '../../src/workspace/paths.js';
import { BIN, TEST_TOKEN } from '../helpers/server.js';
import { makeWorkspace, type TempWorkspace } from '../helpers/workspace.js';

describe('Runtime: assembly, then start()', () => {
  let ws: TempWorkspace;
  let runtimeRoot: string;
  beforeAll(() => {
    ws = makeWorkspace({ 'a.txt': 'a\n' });
    runtimeRoot = mkdtempSync(path.join(tmpdir(), 'wb-start-'));
  });
  afterAll(() => {
    rmSync(runtimeRoot, { recursive: true, force: true });
    ws.cleanup();
  });

  /** A Runtime built as the CLI builds one, from SERVICE_* settings. */
  function assemble(env: Record<string, string>): Runtime {
    const all = { PATH: process.env.PATH ?? '', SERVICE_AUTH_TOKEN: TEST_TOKEN, ...env };
    const action = load(['--workspace', ws.dir], { ...all, SERVICE_RUNTIME_ROOT: runtimeRoot }, ws.dir);
    if (action.kind !== 'serve') throw new Error('unexpected action');
    const rc = checkRoot(ws.dir, '/nonexistent-home');
    if (!rc.ok) throw new Error(rc.reason);
    return new Runtime({ config: action.config, root: rc.root, log: silentLogger });
  }

  it('the constructor probes nothing: a bubblewrap that cannot run is refused by start()', async () => {
    const runtime = assemble({ SERVICE_SANDBOX: 'bwrap', PATH: '/nonexistent-dir' });
    try {
      await expect(runtime.start()).rejects.toBeInstanceOf(SandboxUnavailableError);
    } finally {
      await runtime.shutdown();
    }
    expect(readdirSync(runtimeRoot), 'shutdown removed the runtime directory').toEqual([]);
  });

  it('a runtime starts once', async () => {
    const runtime = assemble({ SERVICE_SANDBOX: 'off' });
    try {
      await runtime.start();
      await expect(runtime.start()).rejects.toThrow(/already started/);
    } finally {
      await runtime.shutdown();
    }
  });

  it('the bin refuses the start (exit 2, one line) and leaves no runtime directory behind', () => {
    const r = spawnSync(process.execPath, [BIN, '--workspace', ws.dir, '--port', '0'], {
      env: {
        PATH: '/nonexistent-dir',
        HOME: '/nonexistent-home',
        SERVICE_AUTH_TOKEN: TEST_TOKEN,
        SERVICE_STATE_DIR: 'off',
        SERVICE_SANDBOX: 'bwrap',
        SERVICE_RUNTIME_ROOT: runtimeRoot,
      },
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(r.status, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/SERVICE_SANDBOX=bwrap, but bwrap \(bubblewrap\) is not installed/);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(readdirSync(runtimeRoot)).toEqual([]);
  });
});
