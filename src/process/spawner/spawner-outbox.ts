// The server's messages to the spawner helper (spawner.ts), sent in batches: what is posted in one turn of the
// event loop goes out as one IPC write at its end. Starting a command posts its spawn, the end of its stdin and
// the request for the next prepared sandbox; sent one by one they cost three writes, and each write to a helper
// that sleeps wakes it, which is most of a write's cost (bench/regression-bench.mjs measured the server's CPU
// per `exec_command true`). Order is kept; a batch goes to one helper.
import type { ChildProcess } from 'node:child_process';
import type { ToHelper } from './spawner-messages.js';

export class HelperOutbox {
  private queue: ToHelper[] = [];
  private to: ChildProcess | undefined;

  /** `failed`: a write to `child` threw (its channel is broken). */
  constructor(private readonly failed: (child: ChildProcess, e: unknown) => void) {}

  post(msg: ToHelper, child: ChildProcess): void {
    if (this.to !== child) this.flush();
    this.to = child;
    if (this.queue.push(msg) === 1) queueMicrotask(() => this.flush());
  }

  /** Sends what waits now (before the channel is closed, for one). */
  flush(): void {
    const child = this.to;
    const batch = this.queue;
    if (!child || batch.length === 0) return;
    this.queue = [];
    if (!child.connected) return;
    try {
      const one = batch.length === 1 ? batch[0] : undefined;
      child.send(one ?? batch);
    } catch (e) {
      this.failed(child, e);
    }
  }
}
