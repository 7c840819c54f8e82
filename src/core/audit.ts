// The audit log (SERVICE_AUDIT_LOG): one JSON line per tool call — who, which tool, which arguments, the
// result code — and one per decision of the `safe` network proxy (`"event": "network"`). Argument values
// under secret-looking keys are redacted; the file is opened for append only.
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
  /** The caller's W3C trace context (params._meta.traceparent), when it sent a valid one. */
  traceparent?: string;
}

/** A W3C Trace Context `traceparent` (version-traceid-parentid-flags, lowercase hex; ids not all zeros). */
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** `v` when it is a valid traceparent (version ff is invalid), else undefined: nothing else reaches a log line. */
export function validTraceparent(v: unknown): string | undefined {
  if (typeof v !== 'string') return undefined;
  const m = TRACEPARENT.exec(v);
  if (!m || m[1] === 'ff' || /^0+$/.test(m[2] as string) || /^0+$/.test(m[3] as string)) return undefined;
  return v;
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
        traceparent: e.traceparent,
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
    this.append(line);
  }

  /** One decision of the `safe` filtering proxy (process/net/net-proxy.ts): host, port, allowed or why not, command. */
  network(e: object): void {
    this.append(JSON.stringify({ time: new Date(this.clock.now()).toISOString(), event: 'network', ...e }));
  }

  private append(line: string): void {
    try {
      appendFileSync(this.file, line + '\n', { mode: 0o600 });
    } catch {
      // An unwritable audit file must not take tool calls down; start-up already checked it once.
    }
  }
}
