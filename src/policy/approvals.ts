// The operator's approvals (docs/console.md#approvals): a refusal the user could lift — a destructive command,
// a host the network allow-list refused, a sign-in — becomes a request on the operator's console when the client
// cannot ask its own user. The call waits (up to its yield time) for Approve or Deny; a call that comes again with
// the same tool and arguments from the same client finds its request. "Approve for this client for N minutes"
// is a standing rule of one kind for one client. Sign-ins carry a pairing code the operator must type: three
// wrong codes withdraw the request. A command is kept whole up to SUBJECT_KEPT characters, else its start and
// its end with the count left out (the console shows that count: docs/console.md#what-you-see-is-what-runs).
// Bounded, clock injected; every change is published for the console.
import type { Clock } from '../core/clock.js';
import { safeEqual } from '../core/constant-time.js';
import { Feed } from '../core/feed.js';
import { keepEnds } from '../core/text/visible-text.js';
import { randomHex } from '../core/random.js';

export type ApprovalKind = 'command' | 'network' | 'signin';
export type ApprovalState = 'pending' | 'approved' | 'denied' | 'withdrawn' | 'used';

export interface ApprovalView {
  id: string;
  kind: ApprovalKind;
  /** Who asks: a client label (token label, OAuth client name). */
  client: string;
  /** The command line, the host name(s), or the sign-in's redirect host (its client name is `client`). */
  subject: string;
  /** Characters left out of the middle of a longer subject (SUBJECT_KEPT): `subject` is its start and end. */
  omitted?: number;
  /** The command that runs if approved, when the subject is not it (a network approval's host names). */
  command?: string;
  /** As `omitted`, for `command`. */
  commandOmitted?: number;
  /** Why the server refused on its own (the policy's words). */
  why: string;
  /** What the model said it needs this for (request_permissions' reason), when it said. */
  reason?: string;
  state: ApprovalState;
  created: number;
  decided?: number;
  note?: string;
  /** A sign-in: the operator must type the pairing code shown on the authorization page. */
  needsCode?: boolean;
}

export interface ApprovalAsk {
  kind: ApprovalKind;
  clientKey: string;
  client: string;
  /** Same client and same key → the same request (the tool and its arguments' fingerprint). */
  key: string;
  subject: string;
  /** The command that runs if approved, when the subject is not it (host names). */
  command?: string;
  why: string;
  /** Sign-ins: the pairing code shown to the person signing in. */
  code?: string;
}

export type Decision =
  | { action: 'approve'; minutes?: number; note?: string; code?: string }
  | { action: 'deny'; note?: string; code?: string };

export type DecideResult =
  | { ok: true; view: ApprovalView }
  | { ok: false; reason: 'unknown' | 'decided' | 'wrong_code' | 'withdrawn' };

export interface Wait {
  result: 'approved' | 'denied' | 'pending';
  /** The operator's note with a decision. */
  note?: string;
}

interface Entry {
  view: ApprovalView;
  clientKey: string;
  key: string;
  code?: string;
  wrongCodes: number;
  waiters: Set<() => void>;
}

export const MAX_PENDING_APPROVALS = 64;
/** An undecided request nobody asked about again is withdrawn after this. */
export const APPROVAL_TTL_MS = 15 * 60_000;
/** Longest "approve for this client" the console offers. */
export const MAX_STANDING_MINUTES = 24 * 60;
export const MAX_WRONG_CODES = 3;
const REASON_TTL_MS = 10 * 60_000;
const MAX_REASONS = 256;
/** The most of a subject kept (its start and its end): more than the console shows of it. */
export const SUBJECT_KEPT = 16 * 1024;

export class ApprovalDesk {
  private readonly entries = new Map<string, Entry>();
  private readonly standing = new Map<string, number>();
  private readonly reasons = new Map<string, { text: string; at: number }>();
  private watchers = 0;
  /** Every change of a request, for the console. */
  readonly changes = new Feed<ApprovalView>(100);

  /**
   * `main`: the runtime's desk, for a workspace's own (src/workspaces/services.ts): a page watching the console
   * attends this desk too, from the workspace's first call on.
   */
  constructor(
    private readonly clock: Clock,
    private readonly main?: ApprovalDesk,
  ) {}

  /** A console page is open: someone can answer (docs/console.md#approvals). Returns the release. */
  watch(): () => void {
    this.watchers++;
    let released = false;
    return () => {
      if (!released) this.watchers--;
      released = true;
    };
  }

  get attended(): boolean {
    return this.watchers > 0 || (this.main?.attended ?? false);
  }

  /** Spends an approval the operator already gave for this call (asked earlier), if there is one. */
  takeApproved(clientKey: string, key: string): boolean {
    for (const e of this.entries.values())
      if (e.clientKey === clientKey && e.key === key && e.view.state === 'approved') {
        this.settle(e, 'used');
        return true;
      }
    return false;
  }

  /**
   * The model's stated reason for a permission (request_permissions): shown with the next new request of that
   * kind from that client only (within REASON_TTL_MS), then forgotten. Kept whole: request_permissions takes at
   * most 2,000 characters.
   */
  noteReason(clientKey: string, kind: ApprovalKind, text: string): void {
    if (this.reasons.size >= MAX_REASONS) this.reasons.delete(this.reasons.keys().next().value as string);
    this.reasons.set(`${clientKey}\0${kind}`, { text, at: this.clock.now() });
  }

  /** The reason waiting for the next request of this kind from this client, taken (it is shown once). */
  private takeReason(clientKey: string, kind: ApprovalKind): string | undefined {
    const k = `${clientKey}\0${kind}`;
    const r = this.reasons.get(k);
    this.reasons.delete(k);
    return r && this.clock.now() - r.at < REASON_TTL_MS ? r.text : undefined;
  }

  /** Whether the operator approved this kind for this client for a while. */
  standingFor(clientKey: string, kind: ApprovalKind): boolean {
    const until = this.standing.get(`${clientKey}\0${kind}`);
    return until !== undefined && until > this.clock.now();
  }

  /** The request for this call: the one already open (or decided and not yet used), else a new one. */
  request(a: ApprovalAsk): ApprovalView {
    this.sweep();
    for (const e of this.entries.values())
      if (
        e.clientKey === a.clientKey &&
        e.key === a.key &&
        (e.view.state === 'pending' || e.view.state === 'approved' || e.view.state === 'denied')
      )
        return e.view;
    if (this.pendingCount() >= MAX_PENDING_APPROVALS) this.withdrawOldest();
    const reason = this.takeReason(a.clientKey, a.kind);
    const subject = keepEnds(a.subject, SUBJECT_KEPT);
    const command = a.command === undefined ? undefined : keepEnds(a.command, SUBJECT_KEPT);
    const view: ApprovalView = {
      id: `R${randomHex(3)}`,
      kind: a.kind,
      client: a.client,
      subject: subject.text,
      ...(subject.omitted ? { omitted: subject.omitted } : {}),
      ...(command ? { command: command.text } : {}),
      ...(command?.omitted ? { commandOmitted: command.omitted } : {}),
      why: a.why,
      state: 'pending',
      created: this.clock.now(),
      ...(reason !== undefined ? { reason } : {}),
      ...(a.code ? { needsCode: true } : {}),
    };
    this.entries.set(view.id, {
      view,
      clientKey: a.clientKey,
      key: a.key,
      code: a.code,
      wrongCodes: 0,
      waiters: new Set(),
    });
    this.changes.publish({ ...view });
    return view;
  }

  get(id: string): ApprovalView | undefined {
    return this.entries.get(id)?.view;
  }

  /** Open requests, oldest first. */
  pending(): ApprovalView[] {
    this.sweep();
    return [...this.entries.values()].filter((e) => e.view.state === 'pending').map((e) => e.view);
  }

  /** Waits up to `ms` for the operator; an approved request is spent by the call that sees it. */
  async wait(id: string, ms: number, signal?: AbortSignal): Promise<Wait> {
    const e = this.entries.get(id);
    if (!e) return { result: 'denied', note: 'the request is no longer open' };
    if (e.view.state === 'pending' && ms > 0) {
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          e.waiters.delete(done);
          signal?.removeEventListener('abort', done);
          resolve();
        };
        const timer = setTimeout(done, ms);
        e.waiters.add(done);
        signal?.addEventListener('abort', done, { once: true });
      });
    }
    const { state, note } = e.view;
    if (state === 'pending') return { result: 'pending' };
    if (state === 'approved') this.settle(e, 'used');
    // A denial is told once: the next identical call makes a new request.
    else this.entries.delete(id);
    return { result: state === 'approved' ? 'approved' : 'denied', ...(note ? { note } : {}) };
  }

  decide(id: string, d: Decision): DecideResult {
    const e = this.entries.get(id);
    if (!e) return { ok: false, reason: 'unknown' };
    if (e.view.state === 'withdrawn') return { ok: false, reason: 'withdrawn' };
    if (e.view.state !== 'pending') return { ok: false, reason: 'decided' };
    if (
      e.code !== undefined &&
      d.action === 'approve' &&
      !safeEqual(normalCode(d.code), normalCode(e.code))
    ) {
      e.wrongCodes++;
      if (e.wrongCodes >= MAX_WRONG_CODES) {
        this.settle(e, 'withdrawn', 'the pairing code was typed wrong three times');
        return { ok: false, reason: 'withdrawn' };
      }
      return { ok: false, reason: 'wrong_code' };
    }
    if (d.action === 'approve' && d.minutes && d.minutes > 0 && e.view.kind !== 'signin') {
      const minutes = Math.min(d.minutes, MAX_STANDING_MINUTES);
      this.standing.set(`${e.clientKey}\0${e.view.kind}`, this.clock.now() + minutes * 60_000);
    }
    this.settle(e, d.action === 'approve' ? 'approved' : 'denied', d.note?.slice(0, 500));
    return { ok: true, view: e.view };
  }

  /** The asker gave up (a sign-in page closed, a request replaced). */
  withdraw(id: string): void {
    const e = this.entries.get(id);
    if (e && e.view.state === 'pending') this.settle(e, 'withdrawn');
  }

  private settle(e: Entry, state: ApprovalState, note?: string): void {
    e.view = { ...e.view, state, decided: this.clock.now(), ...(note ? { note } : {}) };
    if (state === 'used' || state === 'withdrawn') this.entries.delete(e.view.id);
    this.changes.publish({ ...e.view });
    for (const w of [...e.waiters]) w();
  }

  private pendingCount(): number {
    let n = 0;
    for (const e of this.entries.values()) if (e.view.state === 'pending') n++;
    return n;
  }

  private withdrawOldest(): void {
    for (const e of this.entries.values())
      if (e.view.state === 'pending') return this.settle(e, 'withdrawn', 'too many open requests');
  }

  private sweep(): void {
    const now = this.clock.now();
    for (const e of [...this.entries.values()])
      if (now - e.view.created > APPROVAL_TTL_MS) {
        if (e.view.state === 'pending') this.settle(e, 'withdrawn', 'nobody decided in time');
        else this.entries.delete(e.view.id);
      }
    for (const [k, until] of this.standing) if (until <= now) this.standing.delete(k);
  }
}

/** A pairing code as typed: case, spaces and dashes do not matter. */
function normalCode(c: string | undefined): string {
  return (c ?? '').toUpperCase().replace(/[^A-Z0-9]/g, '');
}
