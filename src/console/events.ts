// The console's live stream (Server-Sent Events on the console listener, docs/console.md#what-it-shows): the
// full state once, then each activity entry, approval change and edit as it happens, and the command list when
// it changed (looked at every COMMAND_POLL_MS while a page is open). Entries are batched per BATCH_MS so a
// busy server writes a few events a second, not one per call. At most MAX_STREAMS pages at once.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ActivityEntry } from '../core/activity.js';
import type { ConsoleHost } from './host.js';
import type { ApprovalDesk } from '../policy/approvals.js';
import { editView, pointView, snapshot, workspacesView } from './views.js';

export const MAX_STREAMS = 8;
/** The most activity entries one batch carries; older ones of a faster burst are counted as skipped. */
export const ACTIVITY_PER_BATCH = 50;
const BATCH_MS = 200;
const COMMAND_POLL_MS = 1000;
const HEARTBEAT_MS = 15_000;

function frame(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

/**
 * What one page is sent between snapshots. Activity goes out as one event per batch, at most ACTIVITY_PER_BATCH
 * entries (the newest): however fast clients call, the page costs the server a few writes a second
 * (docs/console.md#cost); the rest is counted as skipped.
 */
class Batch {
  private events: string[] = [];
  private activity: ActivityEntry[] = [];
  private skipped = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly res: ServerResponse) {}

  queue(event: string, data: unknown): void {
    this.events.push(frame(event, data));
    this.later();
  }

  call(e: ActivityEntry): void {
    this.activity.push(e);
    if (this.activity.length > 4 * ACTIVITY_PER_BATCH) this.keepNewest();
    this.later();
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
  }

  private keepNewest(): void {
    this.skipped += Math.max(0, this.activity.length - ACTIVITY_PER_BATCH);
    this.activity = this.activity.slice(-ACTIVITY_PER_BATCH);
  }

  private later(): void {
    this.timer ??= setTimeout(() => this.flush(), BATCH_MS);
  }

  private flush(): void {
    this.timer = undefined;
    if (this.activity.length) {
      this.keepNewest();
      const skipped = this.skipped;
      this.events.push(frame('activity', { entries: this.activity, ...(skipped ? { skipped } : {}) }));
      this.activity = [];
      this.skipped = 0;
    }
    const out = this.events.join('');
    this.events = [];
    if (out) this.res.write(out);
  }
}

/**
 * The open workspaces for one page: their list is sent again when it changed (looked at with the commands),
 * and each workspace's approvals are watched while the page is open, as the runtime's are.
 */
class WorkspaceWatch {
  private last: string;
  private readonly watched = new Map<ApprovalDesk, () => void>();

  constructor(private readonly host: ConsoleHost) {
    this.last = this.now();
    this.watchDesks();
  }

  private now(): string {
    return this.host.workspaces ? JSON.stringify(workspacesView(this.host)) : '';
  }

  private watchDesks(): void {
    for (const w of this.host.workspaces?.list() ?? [])
      if (w.approvals && !this.watched.has(w.approvals)) this.watched.set(w.approvals, w.approvals.watch());
  }

  /** The list as an event when it changed since the last look, else undefined. */
  poll(): string | undefined {
    if (!this.host.workspaces) return undefined;
    this.watchDesks();
    const now = this.now();
    if (now === this.last) return undefined;
    this.last = now;
    return `event: workspaces\ndata: ${now}\n\n`;
  }

  stop(): void {
    for (const u of this.watched.values()) u();
    this.watched.clear();
  }
}

interface Stream {
  res: ServerResponse;
  stop: () => void;
}

export class EventStreams {
  private readonly streams = new Set<Stream>();

  constructor(private readonly host: ConsoleHost) {}

  open(req: IncomingMessage, res: ServerResponse, csp: string): void {
    if (this.streams.size >= MAX_STREAMS) {
      res.writeHead(429, { 'content-type': 'text/plain', 'retry-after': '5' });
      return void res.end('Too many console pages are open.');
    }
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      'content-security-policy': csp,
      'x-content-type-options': 'nosniff',
    });
    res.socket?.setNoDelay(true);
    res.write(frame('state', snapshot(this.host)));
    const batch = new Batch(res);
    let lastCommands = JSON.stringify(this.host.commands());
    const workspaces = new WorkspaceWatch(this.host);
    const poll = setInterval(() => {
      const now = JSON.stringify(this.host.commands());
      if (now !== lastCommands) {
        lastCommands = now;
        res.write(`event: commands\ndata: ${now}\n\n`);
      }
      const ws = workspaces.poll();
      if (ws) res.write(ws);
    }, COMMAND_POLL_MS);
    const beat = setInterval(() => res.write(': keep-alive\n\n'), HEARTBEAT_MS);
    const unlisten = [
      // While a page is open, refusals the operator may lift wait for them (policy/approvals.ts).
      this.host.approvals.watch(),
      this.host.activity.listen((e) => batch.call(e)),
      this.host.approvals.changes.listen((v) => batch.queue('approval', v)),
      this.host.edits.changes.listen((e) => batch.queue('edit', editView(e))),
      this.host.reviews.feed.listen((p) => batch.queue('point', pointView(p))),
    ];
    const stream: Stream = {
      res,
      stop: () => {
        clearInterval(poll);
        clearInterval(beat);
        batch.stop();
        workspaces.stop();
        for (const u of unlisten) u();
        this.streams.delete(stream);
      },
    };
    this.streams.add(stream);
    req.on('close', stream.stop);
  }

  closeAll(): void {
    for (const s of [...this.streams]) {
      s.stop();
      s.res.end();
    }
  }
}
