// Which clients declared the MCP Apps extension (tools/apps.ts, docs/review-card.md#who-sees-it). A 2026-07-28
// request carries its client's capabilities; a handshake-era client states them once, at initialize, and the
// answer is kept for its session: on stdio the connection (one dispatcher each), over HTTP, which keeps no
// sessions, the authenticated client (its token or OAuth client), the last initialize deciding.
import type { Principal } from '../core/principal.js';
import { declaresUi } from '../tools/apps.js';
import type { Classified } from './classify.js';

/** The most clients remembered; the oldest is forgotten first (it then sees no card until it initializes again). */
const MAX_KEPT = 1024;

export class UiClients {
  private readonly declared = new Set<string>();

  /** At initialize: what this client declared replaces what it declared before. */
  remember(principal: Principal, capabilities: unknown): boolean {
    const key = keyOf(principal);
    this.declared.delete(key);
    if (!declaresUi(capabilities)) return false;
    this.declared.add(key);
    if (this.declared.size > MAX_KEPT) this.declared.delete(this.declared.values().next().value as string);
    return true;
  }

  /** Whether this request comes from a client that declared the extension. */
  has(cls: Classified & { ok: true }, principal: Principal): boolean {
    if (cls.era === 'modern') return declaresUi(cls.clientCapabilities);
    return this.declared.has(keyOf(principal));
  }
}

function keyOf(p: Principal): string {
  return `${p.kind}:${p.id}`;
}
