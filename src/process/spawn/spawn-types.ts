// What every starter of a command shares (spawn.ts for terminals, pipes.ts for pipes, the spawner helper):
// the spec of a spawn, the events it reports and the handle it returns.
import type { CgroupTarget } from './cgroup.js';

export interface SpawnSpec {
  argv: readonly string[];
  cwd: string;
  env: Record<string, string>;
  tty: boolean;
  /** Runs inside bubblewrap: the leader is bwrap, spared by signals other than SIGKILL. */
  sandboxed: boolean;
  /** The command's own pids cgroup (pids-limit.ts), when the host allows one. */
  cgroup?: CgroupTarget;
  /** The seccomp filter bwrap reads from descriptor 3 (seccomp.ts); set with a sandbox that has one. */
  seccomp?: string;
  /** The command alone, without the sandbox's prefix: set when a sandbox prepared ahead may run it (prepared.ts). */
  commandArgv?: readonly string[];
  cols?: number;
  rows?: number;
}

export interface ProcessEvents {
  onStdout(chunk: Buffer): void;
  onStderr(chunk: Buffer): void;
  /**
   * Once, after the leader exited and its output streams are drained (or given up on). `startError` is set
   * when the process could not be started at all.
   */
  onExit(code: number | null, signal: string | null, startError?: string): void;
}

export interface ProcessHandle {
  readonly pid: number;
  readonly tty: boolean;
  /** Whether a pids cgroup bounds the tree (undefined until known: the helper reports it after the spawn). */
  readonly limited: boolean | undefined;
  /** false once stdin was closed (pipes) or the process ended. */
  readonly stdinOpen: boolean;
  write(data: string): boolean;
  closeStdin(): void;
  /** Signal the whole tree; false when no process was left to signal. */
  signal(sig: NodeJS.Signals): boolean;
  /** Settles once the process exists (or could not start); absent when it exists on return (local spawns). */
  readonly whenStarted?: Promise<void>;
}
