// Work that must not delay an answer waits for a quiet moment (docs/security-model.md#tool-jails-prepared-ahead):
// preparing the next jail forks the server, which holds its thread for milliseconds (more on a busy machine),
// so it runs once no request is being answered and none came for GRACE_MS after the last answer went out — a
// client that calls again at once (read_file after search_text) is answered first — or, when requests never
// stop coming, at most MAX_WAIT_MS after it was asked for. A request being answered includes an exec_command
// waiting for its command: the jail's set-up would take its CPU from that command (a test run of ~60 ms on two
// cores), so the wait covers such a run. A call that needs the jail meanwhile sets a jail of its own up the
// usual way (process/jail/prepared-jail.ts, JailSlot.take). Time only decides when deferred work runs, never
// whether it does.

/** Longest a deferred piece of work waits for a quiet moment while requests keep coming. */
export const MAX_WAIT_MS = 1000;
/** How long after an answer the next request of a client that calls again at once is waited for. */
export const GRACE_MS = 5;

export class QuietTime {
  private active = 0;
  private waiting: Array<() => void> = [];
  private timer: NodeJS.Timeout | undefined;
  private grace: NodeJS.Timeout | undefined;
  private flushQueued = false;
  /** Tool calls begun since start (cli/warm-up.ts rehearses the tools only before a client's first). */
  begun = 0;

  /** A request is being answered; the function returned ends it (once, whatever happens). */
  begin(): () => void {
    this.active++;
    this.begun++;
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      this.active--;
      if (this.active === 0) this.afterAnswer();
    };
  }

  /**
   * Runs `fn` once no request is being answered: on the next turn when none is, else GRACE_MS after the last
   * answer (if no request came meanwhile), or after MAX_WAIT_MS.
   */
  later(fn: () => void): void {
    this.waiting.push(fn);
    if (this.active === 0 && this.grace === undefined) this.flushSoon();
    else this.timer ??= setTimeout(() => this.flush(), MAX_WAIT_MS).unref();
  }

  /** The last answer is out: a request that follows within GRACE_MS goes first (the timer restarts at each). */
  private afterAnswer(): void {
    if (this.waiting.length === 0) return;
    clearTimeout(this.grace);
    this.grace = setTimeout(() => {
      this.grace = undefined;
      if (this.active === 0) this.flush();
    }, GRACE_MS).unref();
  }

  /** After the microtasks of the current turn: a check-phase callback runs after them. */
  private flushSoon(): void {
    if (this.flushQueued || this.waiting.length === 0) return;
    this.flushQueued = true;
    setImmediate(() => {
      this.flushQueued = false;
      if (this.active === 0) this.flush();
    });
  }

  private flush(): void {
    clearTimeout(this.timer);
    clearTimeout(this.grace);
    this.timer = undefined;
    this.grace = undefined;
    for (const fn of this.waiting.splice(0)) fn();
  }
}
