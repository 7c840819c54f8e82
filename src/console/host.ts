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
}
