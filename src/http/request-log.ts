// What the server says about requests (docs/configuration.md "Logs"): at `--log-level debug` one line per
// HTTP request — the JSON-RPC method and tool, the status, the duration, the client (the credential's
// non-secret label and the User-Agent); and at `info`, refused credentials, counted and rate-limited: the first
// refusal of a quiet spell at once, then at most one summary per window, each naming where the last one came
// from. A credential is never logged, only that it was refused and why.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { systemClock, type Clock } from '../core/clock.js';
import type { Logger } from '../core/log.js';

/** What the /mcp route learns about a request as it goes, for the request log line. */
export interface RequestNote {
  method?: string;
  tool?: string;
  client?: string;
}

const notes = new WeakMap<IncomingMessage, RequestNote>();

/** Adds to what the log line of `req` will say (a no-op unless the request is traced). */
export function noteRequest(req: IncomingMessage, note: RequestNote): void {
  const n = notes.get(req);
  if (n) Object.assign(n, note);
}

function clip(s: string | undefined, max = 80): string | undefined {
  if (s === undefined) return undefined;
  // eslint-disable-next-line no-control-regex -- control characters are what is replaced
  const clean = s.replace(/[\u0000-\u001f\u007f]/g, '?');
  return clean.length > max ? clean.slice(0, max) + '…' : clean;
}

/** Logs `req` at debug level once its response is sent. */
export function traceRequest(req: IncomingMessage, res: ServerResponse, log: Logger): void {
  const started = systemClock.monotonic();
  const note: RequestNote = {};
  notes.set(req, note);
  res.once('close', () => {
    const path = (req.url ?? '/').split('?')[0];
    log.debug('request', {
      http: `${req.method ?? '?'} ${clip(path)}`,
      method: note.method,
      tool: note.tool,
      status: res.statusCode,
      ms: Math.round((systemClock.monotonic() - started) * 100) / 100,
      client: note.client ?? 'unauthenticated',
      agent: clip(req.headers['user-agent']),
      from: req.socket.remoteAddress,
    });
  });
}

/** Where a request came from, as far as it can be told: the peer, what a proxy says it forwarded, the agent. */
export function requestSource(req: IncomingMessage): string {
  const h = req.headers;
  const forwarded =
    clip(h['cf-connecting-ip'] as string | undefined, 64) ??
    clip((h['x-forwarded-for'] as string | undefined)?.split(',')[0]?.trim(), 64) ??
    clip(/for="?\[?([^;,"\]]+)/i.exec((h.forwarded as string | undefined) ?? '')?.[1], 64);
  const parts = [req.socket.remoteAddress ?? 'unknown address'];
  if (forwarded) parts.push(`forwarded for ${forwarded}`);
  const agent = clip(h['user-agent']);
  if (agent) parts.push(`user-agent ${JSON.stringify(agent)}`);
  return parts.join(', ');
}

export const REFUSAL_WINDOW_MS = 60_000;

/** Counts refused credentials and logs them at info, at most one line per window. */
export class RefusalLog {
  /** Refused credentials since start. */
  total = 0;
  private pending = 0;
  private lastLineAt = -Infinity;
  private last: { source: string; reason: string } | undefined;
  private cancel: (() => void) | undefined;

  constructor(
    private readonly log: Logger,
    private readonly clock: Clock,
    private readonly windowMs = REFUSAL_WINDOW_MS,
    /** How a later summary is scheduled (tests call it by hand). */
    private readonly schedule: (fn: () => void, ms: number) => () => void = (fn, ms) => {
      const t = setTimeout(fn, ms);
      t.unref();
      return () => clearTimeout(t);
    },
  ) {}

  note(source: string, reason: string): void {
    this.total++;
    this.pending++;
    this.last = { source, reason };
    const since = this.clock.now() - this.lastLineAt;
    if (since >= this.windowMs) this.flush();
    else this.cancel ??= this.schedule(() => this.flush(), this.windowMs - since);
  }

  private flush(): void {
    this.cancel?.();
    this.cancel = undefined;
    if (this.pending === 0 || !this.last) return;
    const { source, reason } = this.last;
    const what =
      this.pending === 1
        ? `refused a credential from ${source}: ${reason}`
        : `refused ${this.pending} credentials in the last ${Math.round(this.windowMs / 1000)} s, the last from ${source}: ${reason}`;
    this.log.info(`${what} (${this.total} refused since start)`);
    this.pending = 0;
    this.lastLineAt = this.clock.now();
  }
}
