// The watchdog for command trees no pids cgroup holds (pids-limit.ts, docs/security-model.md "Process
// count"): while any such tree runs, every WATCHDOG_MS each is counted and one past the limit is killed whole.
// It stops itself once every running tree is held by a cgroup, and starts again with the next one that is not.
import type { Command } from './command.js';
import { treeSize, WATCHDOG_MS } from './pids-limit.js';

export class TreeWatchdog {
  private timer: NodeJS.Timeout | undefined;

  /** `running`: the commands running now; `max`: SERVICE_EXEC_MAX_PROCESSES. */
  constructor(
    private readonly running: () => readonly Command[],
    private readonly max: () => number,
  ) {}

  /** A command was started that no cgroup holds (or not yet known to): watch until none is left. */
  watch(): void {
    if (this.timer) return;
    this.timer = setInterval(() => this.tick(), WATCHDOG_MS);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private tick(): void {
    const max = this.max();
    let watching = false;
    for (const c of this.running()) {
      if (c.limited === true) continue;
      watching = true;
      if (c.limited === false && !c.escalated && treeSize(c.pid) > max) {
        c.output(
          'stderr',
          Buffer.from(
            `workbench-mcp: this command's process tree grew past ${max} processes (SERVICE_EXEC_MAX_PROCESSES); the whole tree was killed\n`,
          ),
        );
        c.escalate();
      }
    }
    if (!watching) this.stop();
  }
}
