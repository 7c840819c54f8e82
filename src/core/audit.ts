// The audit log (SERVICE_AUDIT_LOG): one JSON line per tool call — who, which tool, which arguments, the
// result code. Argument values under secret-looking keys are redacted; the file is opened for append only.
import { appendFileSync } from 'node:fs';
import type { Principal } from './principal.js';
import type { Clock } from './clock.js';
import { redact } from './log.js';

export interface AuditEvent {
  principal: Principal;
  tool: string;
  arguments: unknown;
  ok: boolean;
  error?: string;
  elapsed_ms: number;
}

export class AuditLog {
  constructor(
    private readonly file: string,
    private readonly clock: Clock,
  ) {}

  record(e: AuditEvent): void {
    const entry = (args: unknown) =>
      JSON.stringify({
        time: new Date(this.clock.now()).toISOString(),
        who: `${e.principal.kind}:${e.principal.id}`,
        tool: e.tool,
        arguments: args,
        ok: e.ok,
        error: e.error,
        elapsed_ms: e.elapsed_ms,
      });
    let line: string;
    try {
      line = entry(
        typeof e.arguments === 'object' && e.arguments !== null
          ? redact(e.arguments as Record<string, unknown>)
          : e.arguments,
      );
    } catch {
      // Arguments nested too deeply to redact or serialise (a hostile client's): the call is still recorded.
      line = entry('[not recorded: nested too deeply]');
    }
    try {
      appendFileSync(this.file, line + '\n', { mode: 0o600 });
    } catch {
      // An unwritable audit file must not take tool calls down; start-up already checked it once.
    }
  }
}
