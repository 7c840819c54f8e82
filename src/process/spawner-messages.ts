// The IPC messages between the server (spawner.ts) and the spawner helper (spawner-main.ts), in order per
// command: spawn, then writes, the end of stdin and signals; back: ready once, spawned, output, exit.
import type { CgroupTarget } from './cgroup.js';

export type ToHelper =
  | {
      t: 'spawn';
      id: number;
      argv: readonly string[];
      cwd: string;
      env: Record<string, string>;
      sandboxed: boolean;
      cgroup?: CgroupTarget;
    }
  | { t: 'write'; id: number; data: string }
  | { t: 'end'; id: number }
  | { t: 'signal'; id: number; sig: NodeJS.Signals };

export type FromHelper =
  | { t: 'ready'; pid: number }
  | { t: 'spawned'; id: number; pid: number; limited: boolean | undefined }
  | { t: 'out'; id: number; fd: 1 | 2; d: Uint8Array }
  | { t: 'exit'; id: number; code: number | null; signal: string | null; startError?: string };
