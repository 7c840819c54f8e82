// What the command policy answers (policy/classify.ts): a verdict value, and the context a command line is
// judged in. The caller maps a refusal to PERMISSION_REQUIRED.
import type { PermissionMode } from '../config/load.js';

export type Refusal = {
  ok: false;
  kind: 'destructive' | 'outside_write' | 'network';
  /** The least permission mode that allows the command. */
  needs: 'trusted' | 'dangerous';
  /** What the command would do, for the model: "`rm -rf` deletes recursively without asking". */
  reason: string;
};
export type Verdict = { ok: true } | Refusal;

export interface PolicyContext {
  mode: PermissionMode;
  /** Real path of the directory the command starts in. */
  cwd: string;
  /** Directories writes may go to (workspace lexical and real path, runtime directory, …). */
  writableRoots: readonly string[];
  /** Where `~` and $HOME point for commands. */
  home: string;
  /** The kernel already keeps commands off the network (sandbox with its own network namespace). */
  networkIsolated: boolean;
}

export function refuse(kind: Refusal['kind'], needs: Refusal['needs'], reason: string): Refusal {
  return { ok: false, kind, needs, reason };
}

export function outside(reason: string): Refusal {
  return refuse('outside_write', 'dangerous', `${reason}, outside the workspace`);
}
