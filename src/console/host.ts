// What the operator's console needs of the server (docs/console.md), as an interface of its own: the composition
// root (src/cli/console-host.ts) satisfies it from the runtime. Views are plain data the page renders.
import type { ActivityFeed } from '../core/activity.js';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/log.js';
import type { EditJournal } from '../patch/journal.js';
import type { ApprovalDesk } from '../policy/approvals.js';
import type { ReviewPoints } from '../git/review-points.js';

export interface CommandView {
  id: string;
  cmd: string;
  workdir: string;
  status: string;
  exit_code: number | null;
  signal: string | null;
  elapsed_ms: number;
  sandboxed: boolean;
  /** The last few KiB of output, both streams, as text. */
  tail: string;
}

export interface ClientSetting {
  client: string;
  /** What to paste or run. */
  text: string;
}

export interface ConnectionView {
  /** The MCP endpoint on this machine, and through the tunnel when one is known. */
  local: string;
  public?: string;
  auth: 'bearer' | 'oauth' | 'noauth';
  /** Whether a credential can be revealed on click (bearer). */
  revealable: boolean;
  tunnel: string;
  clients: ClientSetting[];
}

export interface SafetyView {
  permission_mode: string;
  sandbox: string;
  network: string;
  allow: readonly string[];
  deny: readonly string[];
  limits: Record<string, string | number>;
}

export interface ConsoleHost {
  readonly clock: Clock;
  readonly log: Logger;
  readonly activity: ActivityFeed;
  readonly approvals: ApprovalDesk;
  readonly edits: EditJournal;
  commands(): CommandView[];
  /** Sends a command TERM, then KILL; false when there is no such running command. */
  kill(id: string): Promise<boolean>;
  /** Reverts an edit through the patch engine, audited as the operator (throws a ToolError when it cannot). */
  revert(id: string): Promise<void>;
  /** show_changes' review points, which the Edits view groups edits by. */
  readonly reviews: ReviewPoints;
  /** A review point's diff against the point before it (unified text, bounded). */
  pointDiff(id: string): Promise<string>;
  /** Restores review point `id` through the patch engine, audited as the operator (throws a ToolError). */
  revertPoint(id: string): Promise<void>;
  connection(): ConnectionView;
  /** The bearer token, for the operator who clicks "reveal". */
  credential(): string | undefined;
  safety(): SafetyView;
  /** An audit line for what the operator did here (the audit log, when configured). */
  audit(action: string, args: Record<string, unknown>, error?: string): void;
  /** Recent refusals by the `safe` network proxy. */
  networkBlocks(): Array<{ time: number; host: string; reason: string }>;
  /** The open workspaces, when the server has project roots. */
  readonly workspaces?: ConsoleWorkspaces;
}

/** One open workspace as the console lists it (src/workspaces/): its parts, made into views by views.ts. */
export interface WorkspaceParts {
  id: string;
  path: string;
  mode: 'checkout' | 'worktree';
  branch?: string;
  base?: string;
  source?: string;
  /** Empty while no tool has used the workspace yet (its services are built on first use). */
  commands: CommandView[];
  edits: EditJournal | undefined;
  approvals: ApprovalDesk | undefined;
}

/** An operator's action on a workspace: done, or refused with a reason and the next step. */
export type WorkspaceOutcome<T> = { ok: true; value: T } | { ok: false; reason: string; message: string };

/** The open workspaces (docs/console.md#workspaces), when the server has project roots. */
export interface ConsoleWorkspaces {
  list(): WorkspaceParts[];
  diff(id: string): Promise<WorkspaceOutcome<{ diff: string; untracked: string[]; truncated: boolean }>>;
  merge(id: string): Promise<WorkspaceOutcome<{ commit: string; fast_forward: boolean }>>;
  discard(id: string): Promise<WorkspaceOutcome<{ removed: string }>>;
}
