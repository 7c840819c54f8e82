// What the protocol layer needs of the server: the tools' services (it hands them to each call), the full
// catalog, the project instructions and the audit log. The composition root (src/runtime/runtime.ts) is one.
import type { QuietTime } from '../core/quiet.js';
import type { AuditLog } from '../core/audit.js';
import type { ActivityFeed } from '../core/activity.js';
import type { Catalog } from '../tools/catalog.js';
import type { ToolServices } from '../tools/define.js';

export interface ProtocolHost extends ToolServices {
  readonly catalog: Catalog;
  readonly audit: AuditLog | undefined;
  /** Every call, for the operator's console when it is on (docs/console.md#activity). */
  readonly activity?: ActivityFeed | undefined;
  /** Marks each tool call while it is answered, so work that forks waits until after the answer (core/quiet.ts). */
  readonly quiet?: QuietTime | undefined;
}
