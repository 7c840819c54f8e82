// The operator's approval desk (src/policy/approvals.ts) with a hand-moved clock: one request per client and
// call, approvals spent once, denials told once, standing approvals per client and kind until they expire,
// pairing codes (case, spaces and dashes ignored; three wrong withdraw), the bound on open requests, the TTL,
// the model's stated reason (with the next request of its kind only), the command kept whole or by its ends, and
// that a page being open is what makes calls wait.
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import {
  APPROVAL_TTL_MS,
  ApprovalDesk,
  MAX_PENDING_APPROVALS,
  SUBJECT_KEPT,
} from '../../src/policy/approvals.js';

const ask = (key: string, extra: Partial<Parameters<ApprovalDesk['request']>[0]> = {}) => ({
  kind: 'command' as const,
  clientKey: 'bearer:token#1',
  client: 'token#1',
  key,
  subject: `rm -rf ${key}`,
  why: 'safe mode refuses it',
  ...extra,
});

describe('ApprovalDesk', () => {
  it('the same client and call get the same request; approval is spent by the first call that sees it', async () => {
    const desk = new ApprovalDesk(new ManualClock());
    const a = desk.request(ask('k1'));
    expect(desk.request(ask('k1')).id).toBe(a.id);
    expect(desk.request(ask('k1', { clientKey: 'bearer:token#2' })).id).not.toBe(a.id);
    expect(desk.decide(a.id, { action: 'approve' }).ok).toBe(true);
    expect(desk.decide(a.id, { action: 'deny' })).toEqual({ ok: false, reason: 'decided' });
    expect((await desk.wait(a.id, 0)).result).toBe('approved');
    expect((await desk.wait(a.id, 0)).result).toBe('denied'); // spent
    expect(desk.takeApproved('bearer:token#1', 'k1')).toBe(false);
  });

  it('a waiting call wakes on the decision; a denial carries the note and is told once', async () => {
    const desk = new ApprovalDesk(new ManualClock());
    const a = desk.request(ask('k2'));
    const waiting = desk.wait(a.id, 60_000);
    desk.decide(a.id, { action: 'deny', note: 'not today' });
    expect(await waiting).toEqual({ result: 'denied', note: 'not today' });
    expect(desk.request(ask('k2')).id).not.toBe(a.id);
  });

  it('an abort ends the wait as pending', async () => {
    const desk = new ApprovalDesk(new ManualClock());
    const a = desk.request(ask('k3'));
    const ac = new AbortController();
    const waiting = desk.wait(a.id, 60_000, ac.signal);
    ac.abort();
    expect((await waiting).result).toBe('pending');
  });

  it('approve for this client for N minutes: a standing rule of that kind, gone after N minutes', () => {
    const clock = new ManualClock();
    const desk = new ApprovalDesk(clock);
    const a = desk.request(ask('k4'));
    desk.decide(a.id, { action: 'approve', minutes: 15 });
    expect(desk.standingFor('bearer:token#1', 'command')).toBe(true);
    expect(desk.standingFor('bearer:token#1', 'network')).toBe(false);
    expect(desk.standingFor('bearer:token#2', 'command')).toBe(false);
    clock.advance(15 * 60_000);
    expect(desk.standingFor('bearer:token#1', 'command')).toBe(false);
  });

  it('pairing codes: case, spaces and dashes do not matter; three wrong ones withdraw the request', () => {
    const desk = new ApprovalDesk(new ManualClock());
    const a = desk.request(ask('s1', { kind: 'signin', code: 'K7P-2QX' }));
    expect(a.needsCode).toBe(true);
    expect(desk.decide(a.id, { action: 'approve' })).toEqual({ ok: false, reason: 'wrong_code' });
    expect(desk.decide(a.id, { action: 'approve', code: 'k7p 2qx' }).ok).toBe(true);
    const b = desk.request(ask('s2', { kind: 'signin', code: 'AAA-BBB' }));
    const r = [1, 2, 3].map(() => desk.decide(b.id, { action: 'approve', code: 'XXX-XXX' }));
    expect(r.map((x) => (x.ok ? 'ok' : x.reason))).toEqual(['wrong_code', 'wrong_code', 'withdrawn']);
    expect(desk.decide(b.id, { action: 'approve', code: 'AAA-BBB' })).toEqual({
      ok: false,
      reason: 'unknown',
    });
    // A sign-in is never a standing rule.
    const c = desk.request(ask('s3', { kind: 'signin', code: 'CCC-DDD' }));
    desk.decide(c.id, { action: 'approve', code: 'CCC-DDD', minutes: 60 });
    expect(desk.standingFor('bearer:token#1', 'signin')).toBe(false);
  });

  it('open requests are bounded (the oldest is withdrawn) and expire after APPROVAL_TTL_MS', () => {
    const clock = new ManualClock();
    const desk = new ApprovalDesk(clock);
    const first = desk.request(ask('b0'));
    for (let i = 1; i <= MAX_PENDING_APPROVALS; i++) desk.request(ask(`b${i}`));
    expect(desk.pending()).toHaveLength(MAX_PENDING_APPROVALS);
    expect(desk.get(first.id)).toBeUndefined();
    clock.advance(APPROVAL_TTL_MS + 1);
    expect(desk.pending()).toHaveLength(0);
  });

  it('the model reason from request_permissions rides with the next request of that kind only', () => {
    const desk = new ApprovalDesk(new ManualClock());
    desk.noteReason('bearer:token#1', 'command', 'clean the build output before a fresh build');
    expect(desk.request(ask('r2', { kind: 'network' })).reason).toBeUndefined();
    const first = desk.request(ask('r1'));
    expect(first.reason).toBe('clean the build output before a fresh build');
    // The same call finds the same request, with its reason; the next new request has none.
    expect(desk.request(ask('r1')).reason).toBe('clean the build output before a fresh build');
    expect(desk.request(ask('r3')).reason).toBeUndefined();
    expect(desk.request(ask('r4', { clientKey: 'bearer:token#2' })).reason).toBeUndefined();
  });

  it('a command is kept whole up to SUBJECT_KEPT, else its start and end with the count left out', () => {
    const desk = new ApprovalDesk(new ManualClock());
    const cmd = `ls -la${' '.repeat(3000)}; rm -rf ./data`;
    expect(desk.request(ask('c1', { subject: cmd }))).toMatchObject({ subject: cmd });
    expect(desk.request(ask('c1', { subject: cmd })).omitted).toBeUndefined();
    const long = `echo ${'a'.repeat(SUBJECT_KEPT * 2)}; rm -rf ./data`;
    const v = desk.request(ask('c2', { subject: long }));
    expect(v.subject).toHaveLength(SUBJECT_KEPT);
    expect(v.subject.endsWith('; rm -rf ./data')).toBe(true);
    expect(v.subject.length + (v.omitted ?? 0)).toBe(long.length);
    // A network approval names its hosts and carries the command that runs, kept the same way.
    const net = desk.request(ask('n1', { kind: 'network', subject: 'example.com', command: long }));
    expect(net).toMatchObject({ subject: 'example.com', commandOmitted: long.length - SUBJECT_KEPT });
    expect(net.command?.endsWith('; rm -rf ./data')).toBe(true);
  });

  it('calls wait only while a console page is open', () => {
    const desk = new ApprovalDesk(new ManualClock());
    expect(desk.attended).toBe(false);
    const release = desk.watch();
    const release2 = desk.watch();
    expect(desk.attended).toBe(true);
    release();
    release(); // twice is once
    expect(desk.attended).toBe(true);
    release2();
    expect(desk.attended).toBe(false);
  });

  it("a workspace's desk is attended while the runtime's is, from its first call on", () => {
    const clock = new ManualClock();
    const main = new ApprovalDesk(clock);
    const ws = new ApprovalDesk(clock, main);
    expect(ws.attended).toBe(false);
    const release = main.watch();
    expect(ws.attended).toBe(true);
    release();
    expect(ws.attended).toBe(false);
    // Watching the workspace's own desk does not make the runtime's attended.
    const own = ws.watch();
    expect(main.attended).toBe(false);
    own();
  });
});
