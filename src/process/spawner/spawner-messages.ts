// The IPC messages between the server (spawner.ts) and the spawner helper (spawner-main.ts), in order per
// command: spawn, then writes, the end of stdin and signals; back: ready once, spawned, output, exit. Between
// commands the server may ask for sandboxes prepared ahead (prepared-sandbox.ts), which a later spawn names or a
// drop lets go (built from options a command no longer gets).
import type { CgroupTarget } from '../spawn/cgroup.js';
import type { PrepareSpec } from './prepared-sandbox.js';

export type ToHelper =
  | {
      t: 'spawn';
      id: number;
      argv: readonly string[];
      cwd: string;
      env: Record<string, string>;
      sandboxed: boolean;
      cgroup?: CgroupTarget;
      seccomp?: string;
      /** Run it in prepared sandbox `n` if that one still waits: `argv` without the sandbox's own prefix. */
      warm?: { n: number; argv: readonly string[] };
    }
  | ({ t: 'prepare'; n: number } & PrepareSpec)
  | { t: 'drop'; n: number }
  | { t: 'ping'; n: number }
  | { t: 'write'; id: number; data: string }
  | { t: 'end'; id: number }
  | { t: 'signal'; id: number; sig: NodeJS.Signals };

export type FromHelper =
  | { t: 'ready'; pid: number }
  | { t: 'pong'; n: number }
  | { t: 'spawned'; id: number; pid: number; limited: boolean | undefined; warm?: boolean }
  | { t: 'out'; id: number; fd: 1 | 2; d: Uint8Array }
  | { t: 'exit'; id: number; code: number | null; signal: string | null; startError?: string };

/** The most bytes one output message may carry (the helper sends what one read returned: 64 KiB at most). */
const MAX_CHUNK_BYTES = 1024 * 1024;

const isId = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) > 0;
const isCount = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0;
const isShort = (v: unknown, max: number): v is string => typeof v === 'string' && v.length <= max;

/**
 * A message from the helper, checked field by field, or undefined. The helper runs outside every sandbox, but
 * the server still never acts on a message it has not checked (docs/security-model.md, rule B): a malformed
 * one means the helper is not the program we started, and the caller replaces it.
 */
export function parseFromHelper(m: unknown): FromHelper | undefined {
  if (typeof m !== 'object' || m === null) return undefined;
  const o = m as Record<string, unknown>;
  switch (o.t) {
    case 'ready':
      return isCount(o.pid) ? { t: 'ready', pid: o.pid } : undefined;
    case 'pong':
      return isCount(o.n) ? { t: 'pong', n: o.n } : undefined;
    case 'spawned':
      if (!isId(o.id) || !isCount(o.pid)) return undefined;
      if (o.limited !== undefined && typeof o.limited !== 'boolean') return undefined;
      if (o.warm !== undefined && typeof o.warm !== 'boolean') return undefined;
      return { t: 'spawned', id: o.id, pid: o.pid, limited: o.limited, warm: o.warm };
    case 'out':
      if (!isId(o.id) || (o.fd !== 1 && o.fd !== 2)) return undefined;
      if (!(o.d instanceof Uint8Array) || o.d.byteLength > MAX_CHUNK_BYTES) return undefined;
      return { t: 'out', id: o.id, fd: o.fd, d: o.d };
    case 'exit': {
      if (!isId(o.id)) return undefined;
      if (o.code !== null && !(Number.isSafeInteger(o.code) && Math.abs(o.code as number) < 1 << 16))
        return undefined;
      if (o.signal !== null && !isShort(o.signal, 32)) return undefined;
      if (o.startError !== undefined && !isShort(o.startError, 4096)) return undefined;
      return {
        t: 'exit',
        id: o.id,
        code: o.code as number | null,
        signal: o.signal as string | null,
        startError: o.startError,
      };
    }
    default:
      return undefined;
  }
}
