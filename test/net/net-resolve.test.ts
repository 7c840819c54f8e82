// The proxy's name lookups (src/process/net/net-resolve.ts, docs/security-model.md#network-per-mode): one lookup
// per name at a time, an answer kept for RESOLVE_TTL_MS on the injected clock, failures never kept, at most
// RESOLVE_MAX_NAMES names, at most MAX_LOOKUPS lookups running (the rest wait their turn, within the timeout), and through the proxy itself: eight tunnels opened at once to one name cost one
// lookup, and every one of them still goes to the checked address.
import { mkdtempSync, rmSync } from 'node:fs';
import net, { type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { proxyExchange } from '../helpers/raw-http.js';
import { DEFAULT_ALLOW } from '../../src/process/net/net-allow.js';
import type { NetDecision } from '../../src/process/net/net-decision.js';
import { NetProxy } from '../../src/process/net/net-proxy.js';
import {
  HostResolver,
  LOOKUP_TIMEOUT_MS,
  MAX_LOOKUPS,
  RESOLVE_MAX_NAMES,
  RESOLVE_TTL_MS,
  type LookupAll,
} from '../../src/process/net/net-resolve.js';

/** A DNS stand-in that answers when told to, and counts what it was asked. */
function dns(answers: Record<string, string[] | Error>) {
  const asked: string[] = [];
  const waiting: Array<() => void> = [];
  let hold = false;
  let firstAsked: () => void = () => {};
  const first = new Promise<void>((r) => (firstAsked = r));
  const lookup: LookupAll = (host, done) => {
    asked.push(host);
    firstAsked();
    const answer = () => {
      const a = answers[host] ?? new Error(`ENOTFOUND ${host}`);
      if (a instanceof Error) done(a, []);
      else done(null, a);
    };
    if (hold) waiting.push(answer);
    else queueMicrotask(answer);
  };
  return {
    lookup,
    asked,
    /** Settles when the first lookup is asked for. */
    first,
    hold: () => void (hold = true),
    release: () => {
      hold = false;
      for (const w of waiting.splice(0)) w();
    },
  };
}

describe('HostResolver', () => {
  afterEach(() => void vi.useRealTimers());

  it('one lookup for many callers at once; each gets its own copy of the answer', async () => {
    const d = dns({ 'registry.test': ['104.16.0.1', '104.16.0.2'] });
    const r = new HostResolver({ clock: new ManualClock(), lookup: d.lookup });
    d.hold();
    const all = Array.from({ length: 8 }, () => r.resolve('registry.test'));
    d.release();
    const got = await Promise.all(all);
    expect(d.asked).toEqual(['registry.test']);
    for (const g of got) expect(g).toEqual(['104.16.0.1', '104.16.0.2']);
    got[0]?.push('10.0.0.1');
    expect(await r.resolve('registry.test')).toEqual(['104.16.0.1', '104.16.0.2']);
  });

  it(`kept for ${RESOLVE_TTL_MS} ms on the clock, then asked again`, async () => {
    const clock = new ManualClock();
    const d = dns({ 'registry.test': ['104.16.0.1'] });
    const r = new HostResolver({ clock, lookup: d.lookup });
    await r.resolve('registry.test');
    clock.advance(RESOLVE_TTL_MS - 1);
    await r.resolve('registry.test');
    expect(d.asked).toHaveLength(1);
    clock.advance(1);
    await r.resolve('registry.test');
    expect(d.asked).toHaveLength(2);
  });

  it('a failed lookup is not kept; IP literals and fixed test answers are never looked up', async () => {
    const answers: Record<string, string[] | Error> = { 'flaky.test': new Error('EAI_AGAIN') };
    const d = dns(answers);
    const r = new HostResolver({
      clock: new ManualClock(),
      lookup: d.lookup,
      fixed: { 'fixed.test': ['127.0.0.1'] },
    });
    expect(await r.resolve('flaky.test')).toEqual([]);
    answers['flaky.test'] = ['104.16.0.9'];
    expect(await r.resolve('flaky.test')).toEqual(['104.16.0.9']);
    expect(await r.resolve('192.0.2.7')).toEqual(['192.0.2.7']);
    expect(await r.resolve('::1')).toEqual(['::1']);
    expect(await r.resolve('fixed.test')).toEqual(['127.0.0.1']);
    expect(d.asked).toEqual(['flaky.test', 'flaky.test']);
  });

  it(`at most ${RESOLVE_MAX_NAMES} names: the oldest answer goes first`, async () => {
    const names = Array.from({ length: RESOLVE_MAX_NAMES + 1 }, (_, i) => `h${i}.test`);
    const d = dns(Object.fromEntries(names.map((n, i) => [n, [`203.0.113.${i % 250}`]])));
    const r = new HostResolver({ clock: new ManualClock(), lookup: d.lookup });
    for (const n of names) await r.resolve(n);
    expect(d.asked).toHaveLength(names.length);
    await r.resolve(names[names.length - 1] as string);
    await r.resolve(names[1] as string);
    expect(d.asked).toHaveLength(names.length);
    await r.resolve(names[0] as string);
    expect(d.asked).toHaveLength(names.length + 1);
  });

  it(`a lookup that never answers counts as no answer after ${LOOKUP_TIMEOUT_MS} ms, and is asked again`, async () => {
    vi.useFakeTimers();
    const d = dns({ 'slow.test': ['104.16.0.3'] });
    const r = new HostResolver({ clock: new ManualClock(), lookup: d.lookup });
    d.hold();
    const first = r.resolve('slow.test');
    await vi.advanceTimersByTimeAsync(LOOKUP_TIMEOUT_MS);
    expect(await first).toEqual([]);
    vi.useRealTimers();
    const second = r.resolve('slow.test');
    d.release(); // both lookups answer now: the late first one is kept, the second is used
    expect(await second).toEqual(['104.16.0.3']);
    expect(d.asked).toEqual(['slow.test', 'slow.test']);
  });
});

describe('lookups running at once', () => {
  afterEach(() => void vi.useRealTimers());

  it(`at most ${MAX_LOOKUPS}; the others wait their turn and are answered in order`, async () => {
    const names = Array.from({ length: MAX_LOOKUPS + 2 }, (_, i) => `n${i}.test`);
    const d = dns(Object.fromEntries(names.map((n, i) => [n, [`203.0.113.${i + 1}`]])));
    const r = new HostResolver({ clock: new ManualClock(), lookup: d.lookup });
    d.hold();
    const all = names.map((n) => r.resolve(n));
    expect(d.asked).toEqual(names.slice(0, MAX_LOOKUPS));
    expect(r.pending).toBe(names.length);
    d.release(); // the running ones answer; each answer lets one waiting lookup start (and answer: no hold now)
    expect(await Promise.all(all)).toEqual(names.map((_, i) => [`203.0.113.${i + 1}`]));
    expect(d.asked).toEqual(names);
    expect(r.pending).toBe(0);
  });

  it('a lookup whose time ran out while it waited is never started; a lookup that throws frees its place', async () => {
    vi.useFakeTimers();
    const names = Array.from({ length: MAX_LOOKUPS + 1 }, (_, i) => `w${i}.test`);
    const d = dns(Object.fromEntries(names.map((n) => [n, ['203.0.113.9']])));
    const r = new HostResolver({ clock: new ManualClock(), lookup: d.lookup });
    d.hold();
    const all = names.map((n) => r.resolve(n));
    await vi.advanceTimersByTimeAsync(LOOKUP_TIMEOUT_MS);
    expect(await Promise.all(all)).toEqual(names.map(() => []));
    d.release();
    expect(d.asked).toEqual(names.slice(0, MAX_LOOKUPS));
    expect(r.pending).toBe(0);
    const throwing = new HostResolver({
      clock: new ManualClock(),
      lookup: () => {
        throw new Error('bad name');
      },
    });
    expect(await throwing.resolve('x.test')).toEqual([]);
    expect(throwing.pending).toBe(0);
  });
});

describe('the proxy resolves a name once for connections opened together', () => {
  it('eight CONNECTs at once: one lookup, eight tunnels to the checked address, eight decisions', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'wb-resolve-'));
    const upstream = net.createServer((c) => c.end('hello'));
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', () => r()));
    const port = (upstream.address() as AddressInfo).port;
    const d = dns({ 'registry.test': ['127.0.0.1'] });
    const decisions: NetDecision[] = [];
    const proxy = new NetProxy({
      socketPath: path.join(dir, 'p.sock'),
      rules: { allow: [...DEFAULT_ALLOW, 'registry.test'], deny: [], allowPrivate: ['registry.test'] },
      clock: new ManualClock(),
      lookup: d.lookup,
      onDecision: (x) => void decisions.push(x),
    });
    try {
      proxy.listen();
      await proxy.ready();
      d.hold();
      const tunnel = () =>
        proxyExchange(
          proxy.socketPath,
          `CONNECT registry.test:${port} HTTP/1.1\r\nHost: registry.test:${port}\r\n\r\n`,
        );
      const all = Array.from({ length: 8 }, tunnel);
      // The first head's lookup is held; the other heads wait on it, or find its answer kept.
      await d.first;
      d.release();
      for (const got of await Promise.all(all)) {
        expect(got).toMatch(/^HTTP\/1.1 200 Connection Established/);
        expect(got.endsWith('hello')).toBe(true);
      }
      expect(d.asked).toEqual(['registry.test']);
      expect(decisions).toHaveLength(8);
      for (const x of decisions) expect(x).toMatchObject({ allowed: true, address: '127.0.0.1' });
    } finally {
      await proxy.close();
      upstream.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
