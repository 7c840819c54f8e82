// The server's messages to the spawner helper go out in batches (src/process/spawner/spawner-outbox.ts): what is posted
// in one turn of the event loop reaches the helper as one IPC message, in order; a later turn is a batch of its
// own; a batch never mixes helpers, and flush() sends what waits at once. The peer is a real forked process
// that reports what each of its 'message' events carried.
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HelperOutbox } from '../../src/process/spawner/spawner-outbox.js';
import type { ToHelper } from '../../src/process/spawner/spawner-messages.js';

let dir: string;
let script: string;
const children: ChildProcess[] = [];

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'wb-outbox-'));
  script = path.join(dir, 'peer.cjs');
  // Echoes each message event back (how many messages it carried, and their numbers); at disconnect it exits
  // with the number of messages it received in all.
  writeFileSync(
    script,
    "let all = 0; process.on('message', (m) => { const b = Array.isArray(m) ? m : [m]; all += b.length;" +
      ' if (process.connected) process.send({ size: b.length, ns: b.map((x) => x.n) }); });\n' +
      "process.on('disconnect', () => process.exit(all));\n",
  );
});

afterAll(() => {
  for (const c of children) c.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

function peer(): { child: ChildProcess; next: () => Promise<{ size: number; ns: number[] }> } {
  const child = fork(script, [], { serialization: 'advanced', stdio: ['ignore', 'ignore', 'ignore', 'ipc'] });
  children.push(child);
  const got: Array<{ size: number; ns: number[] }> = [];
  const waiters: Array<(v: { size: number; ns: number[] }) => void> = [];
  child.on('message', (m: { size: number; ns: number[] }) => {
    const w = waiters.shift();
    if (w) w(m);
    else got.push(m);
  });
  const next = () => {
    const m = got.shift();
    return m ? Promise.resolve(m) : new Promise<{ size: number; ns: number[] }>((r) => waiters.push(r));
  };
  return { child, next };
}

const ping = (n: number): ToHelper => ({ t: 'ping', n });

describe('HelperOutbox', () => {
  it('sends what one turn posts as one message, in order, and a later turn as its own', async () => {
    const p = peer();
    const failures: unknown[] = [];
    const box = new HelperOutbox((_c, e) => failures.push(e));
    box.post(ping(1), p.child);
    box.post(ping(2), p.child);
    box.post(ping(3), p.child);
    expect(await p.next()).toEqual({ size: 3, ns: [1, 2, 3] });
    box.post(ping(4), p.child);
    expect(await p.next()).toEqual({ size: 1, ns: [4] });
    expect(failures).toEqual([]);
  });

  it('never mixes helpers in a batch', async () => {
    const a = peer();
    const b = peer();
    const box = new HelperOutbox(() => {});
    box.post(ping(1), a.child);
    box.post(ping(2), a.child);
    box.post(ping(3), b.child); // the batch for a goes out first
    box.post(ping(4), b.child);
    expect(await a.next()).toEqual({ size: 2, ns: [1, 2] });
    expect(await b.next()).toEqual({ size: 2, ns: [3, 4] });
  });

  it('flush() sends what waits at once: it reaches a helper whose channel is closed right after', async () => {
    const codes = [true, false].map(async (flushed) => {
      const p = peer();
      const exited = new Promise<number | null>((r) => p.child.once('exit', (code) => r(code)));
      const box = new HelperOutbox(() => {});
      box.post(ping(1), p.child);
      if (flushed) box.flush();
      p.child.disconnect();
      return exited;
    });
    // Without the flush the batch would have gone at the end of the turn, after the channel closed.
    expect(await Promise.all(codes)).toEqual([1, 0]);
  });

  it('drops a batch for a helper whose channel is closed, without throwing', async () => {
    const p = peer();
    const box = new HelperOutbox(() => {});
    const exited = new Promise((r) => p.child.once('exit', r));
    p.child.disconnect();
    box.post(ping(1), p.child);
    box.flush();
    await exited;
    expect(p.child.connected).toBe(false);
  });
});
