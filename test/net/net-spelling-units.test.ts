// Addresses as numbers, as units (src/config/ip-address.ts, src/process/net/net-allow.ts): every spelling of an
// address parses to one number and one canonical text; the IPv6 forms that carry an IPv4 address take its kind;
// what is no host is refused; SERVICE_NETWORK_ALLOW_PRIVATE, allow/deny patterns and grants compare canonical
// addresses; the refusal names the canonical address and its kind. The proxy as a whole is
// test/net/net-spelling-suite.ts.
import { describe, expect, it } from 'vitest';
import { canonicalIp, formatIp, hostKind, parseCidr, parseIp } from '../../src/config/ip-address.js';
import { isPrivateEntry, normalizeHost } from '../../src/config/network.js';
import {
  addressKind,
  checkHost,
  judgeAddresses,
  matchesPattern,
  privateAllowed,
} from '../../src/process/net/net-allow.js';
import { refusalBody } from '../../src/process/net/net-decision.js';
import { parseAuthority } from '../../src/process/net/net-proxy.js';

describe('one address, one number, one text', () => {
  it('IPv4 in short, decimal, octal and hex forms, with a trailing dot, is its dotted decimal', () => {
    for (const s of [
      '127.0.0.1',
      '127.1',
      '127.0.1',
      '2130706433',
      '0x7f000001',
      '0X7F000001',
      '017700000001',
      '0x7f.0.0.1',
      '0177.0.0.1',
      '0177.0.0.01',
      '127.000.000.001',
      '127.0.0.1.',
      '127.1.',
    ])
      expect([s, canonicalIp(s)]).toEqual([s, '127.0.0.1']);
    expect(canonicalIp('0')).toBe('0.0.0.0');
    expect(canonicalIp('0xa9fea9fe')).toBe('169.254.169.254');
    expect(canonicalIp('169.254.43518')).toBe('169.254.169.254');
  });

  it('IPv6 in any case, padding or compression, with an IPv4 tail, brackets or a zone id, is RFC 5952 text', () => {
    for (const s of [
      '::ffff:127.0.0.1',
      '0:0:0:0:0:ffff:127.0.0.1',
      '0::ffff:127.0.0.1',
      '0:0::ffff:127.0.0.1',
      '0000:0000:0000:0000:0000:ffff:7f00:0001',
      '0:0:0:0:0:ffff:7f00:0001',
      '[::FFFF:7F00:1]',
      '[0:0:0:0:0:FFFF:127.0.0.1]',
      '::ffff:7f00:1%eth0',
      '[::ffff:7f00:1%25eth0]',
    ])
      expect([s, canonicalIp(s)]).toEqual([s, '::ffff:127.0.0.1']);
    expect(canonicalIp('[FE80:0:0:0:0:0:0:1%25eth0]')).toBe('fe80::1');
    expect(canonicalIp('2001:db8:0:0:1:0:0:1')).toBe('2001:db8::1:0:0:1');
    expect(canonicalIp('2001:0db8:0000:0000:0000:0000:0000:0001')).toBe('2001:db8::1');
    expect(canonicalIp('1:0:0:2:0:0:0:3')).toBe('1:0:0:2::3');
    expect(canonicalIp('1:0:2:3:4:5:6:7')).toBe('1:0:2:3:4:5:6:7');
    expect(canonicalIp('0:0:0:0:0:0:0:0')).toBe('::');
    expect(canonicalIp('::127.0.0.1')).toBe('::7f00:1');
    expect(canonicalIp('64:ff9b::169.254.169.254')).toBe('64:ff9b::a9fe:a9fe');
  });

  it('what is no host is refused; what is a name stays a name', () => {
    for (const bad of [
      '1.2.3.09',
      '1.2.3.4.5',
      'foo.123',
      '[::1',
      '::ffff:127.1',
      '0:0:0:0:0:0:ffff:127.0.0.1',
      '::ffff:0127.0.0.1',
      'fe80::1%eth0 x',
      'fe80::1%',
      '00000::1',
      '[::1]x',
    ]) {
      expect([bad, 'bad' in hostKind(bad)]).toEqual([bad, true]);
      expect([bad, normalizeHost(bad)]).toEqual([bad, undefined]);
    }
    expect(hostKind('registry.npmjs.org')).toEqual({ name: 'registry.npmjs.org' });
    expect(normalizeHost('Under_Score.Test.')).toBe('under_score.test');
    expect(normalizeHost('a..b')).toBeUndefined();
    expect(parseIp('localhost')).toBeUndefined();
  });

  it('CIDRs parse in any spelling; the authority of a CONNECT is canonical', () => {
    expect(parseCidr('0x7f.1/8')).toEqual({ ip: { family: 4, value: 0x7f000001n }, bits: 8 });
    expect(parseCidr('::ffff:0:0/96')?.bits).toBe(96);
    expect(parseCidr('10.0.0.0/33')).toBeUndefined();
    expect(parseCidr('fd00::/129')).toBeUndefined();
    expect(isPrivateEntry('0:0::ffff:7f00:1')).toBe(true);
    expect(isPrivateEntry('127.1/8')).toBe(true);
    expect(parseAuthority('[0:0:0:0:0:ffff:127.0.0.1]:80')).toEqual({ host: '::ffff:127.0.0.1', port: 80 });
    expect(parseAuthority('[fe80::1%25eth0]:80')).toEqual({ host: 'fe80::1', port: 80 });
    expect(parseAuthority('2130706433:443')).toEqual({ host: '127.0.0.1', port: 443 });
    expect(parseAuthority('[::ffff:127.1]:80')).toBeUndefined();
    expect(parseAuthority('1.2.3.09:80')).toBeUndefined();
    expect(formatIp({ family: 6, value: 1n })).toBe('::1');
  });
});

describe('kinds by number', () => {
  it('every embedded-IPv4 form takes the kind of the IPv4 inside', () => {
    const cases: Array<[string, string]> = [
      ['::ffff:127.0.0.1', 'loopback'],
      ['0:0:0:0:0:ffff:7f00:0001', 'loopback'],
      ['::127.0.0.1', 'loopback'], // IPv4-compatible
      ['::ffff:0:127.0.0.1', 'loopback'], // SIIT
      ['64:ff9b::127.0.0.1', 'loopback'], // NAT64
      ['64:ff9b::a9fe:a9fe', 'metadata'],
      ['64:ff9b:1::7f00:1', 'loopback'], // local-use NAT64, /96 layout
      ['64:ff9b:1:7f00:0:100::', 'loopback'], // local-use NAT64, /48 layout (127.0 | u octet | 0.1)
      ['64:ff9b:1::', 'private'], // local-use NAT64 is never public
      ['2002:7f00:1::', 'loopback'], // 6to4
      ['2002:a9fe:a9fe::1', 'metadata'],
      ['2002:c0a8:1::1', 'private'],
      ['2001:0:4136:e378:8000:63bf:80ff:fffe', 'loopback'], // Teredo, client 127.0.0.1 (inverted)
      ['2001:0:a00:1::', 'private'], // Teredo, server 10.0.0.1
      ['::ffff:10.0.0.1', 'private'],
      ['::ffff:169.254.169.254', 'metadata'],
      ['::ffff:0.0.0.0', 'unspecified'],
      ['::ffff:8.8.8.8', 'public'],
      ['64:ff9b::8.8.8.8', 'public'],
      ['2002:808:808::1', 'public'],
      ['2001:0:4136:e378:8000:63bf:f7f7:f7f7', 'public'], // Teredo, client 8.8.8.8
      ['::1', 'loopback'],
      ['::', 'unspecified'],
      ['fe80::1%eth0', 'link-local'],
      ['FD00:0EC2:0000:0000:0000:0000:0000:0254', 'metadata'],
      ['fd00::2', 'private'],
      ['2606:2800:220:1::1', 'public'],
      ['2130706433', 'loopback'],
      ['0xa9fea9fe', 'metadata'],
      ['not an address', 'reserved'],
    ];
    for (const [ip, kind] of cases) expect([ip, addressKind(ip)]).toEqual([ip, kind]);
  });

  it('SERVICE_NETWORK_ALLOW_PRIVATE compares numbers: an IPv4 entry covers the forms that carry it, no more', () => {
    expect(privateAllowed(['127.0.0.0/8'], 'x', '0:0:0:0:0:ffff:7f00:0001')).toBe(true);
    expect(privateAllowed(['127.1'], 'x', '::ffff:127.0.0.1')).toBe(true);
    expect(privateAllowed(['0:0::ffff:7f00:1'], 'x', '::ffff:127.0.0.1')).toBe(true);
    expect(privateAllowed(['127.0.0.0/8'], 'x', '2002:7f00:1::')).toBe(true);
    expect(privateAllowed(['10.0.0.0/8'], 'x', '::ffff:127.0.0.1')).toBe(false);
    expect(privateAllowed(['::1'], 'x', '::ffff:127.0.0.1')).toBe(false);
    expect(privateAllowed(['127.0.0.0/8'], 'x', '::1')).toBe(false);
    expect(privateAllowed(['fe80::/10'], 'x', 'fe80::1%eth0')).toBe(true);
    expect(privateAllowed(['Registry.Local.'], 'registry.local', '127.0.0.1')).toBe(true);
  });

  it('judged answers: the canonical address to connect to, or the refused one with its kind and form', () => {
    expect(judgeAddresses([], 'h', ['0:0:0:0:0:0:0:1'])).toEqual({
      refused: { address: '::1', kind: 'loopback' },
    });
    expect(judgeAddresses([], 'h', ['93.184.216.34', '0::ffff:7f00:1'])).toEqual({
      refused: { address: '::ffff:127.0.0.1', kind: 'loopback', via: 'IPv4-mapped 127.0.0.1' },
    });
    expect(judgeAddresses([], 'h', ['2606:2800:0220:0001::0001'])).toEqual({ address: '2606:2800:220:1::1' });
    expect(judgeAddresses(['127.0.0.0/8'], 'h', ['0:0::ffff:127.0.0.1'])).toEqual({
      address: '::ffff:127.0.0.1',
    });
    // This host's own address is refused whatever its range, and so is a form that carries it.
    const own = new Set(['93.184.216.34']);
    expect(judgeAddresses([], 'h', ['1572395042'], own)).toEqual({
      refused: { address: '93.184.216.34', kind: 'host' },
    });
    expect(judgeAddresses([], 'h', ['2002:5db8:d822::1'], own)).toEqual({
      refused: { address: '2002:5db8:d822::1', kind: 'host', via: '6to4 93.184.216.34' },
    });
    expect(judgeAddresses([], 'h', ['not-an-address'])).toEqual({
      refused: { address: 'not-an-address', kind: 'reserved' },
    });
  });

  it('patterns and grants compare canonical addresses; a grant never opens an address', () => {
    expect(matchesPattern('0:0:0:0:0:ffff:127.0.0.1', '::ffff:127.0.0.1')).toBe(true);
    expect(matchesPattern('[::FFFF:7F00:1]', '::ffff:127.0.0.1')).toBe(true);
    const rules = { allow: ['93.184.216.34'], deny: ['0:0::ffff:10.0.0.1'], allowPrivate: [] };
    expect(checkHost(rules, normalizeHost('1572395042') as string)).toEqual({ ok: true });
    expect(checkHost(rules, normalizeHost('[::ffff:a00:1]') as string, new Set(['*']))).toEqual({
      ok: false,
      reason: 'denied',
    });
    // A grant passes the host rules only; the address rules come after it, always.
    const granted = normalizeHost('[0:0:0:0:0:ffff:127.0.0.1]') as string;
    expect(checkHost({ allow: [], deny: [], allowPrivate: [] }, granted, new Set([granted]))).toEqual({
      ok: true,
    });
    expect(judgeAddresses([], granted, [granted])).toMatchObject({ refused: { kind: 'loopback' } });
  });

  it('the refusal names the canonical address, its kind and the IPv4 inside', () => {
    const body = refusalBody({
      host: '::ffff:127.0.0.1',
      port: 8080,
      method: 'CONNECT',
      allowed: false,
      reason: 'private_address',
      address: '::ffff:127.0.0.1',
      kind: 'loopback',
      via: 'IPv4-mapped 127.0.0.1',
    });
    expect(body).toContain('refused [::ffff:127.0.0.1]:8080');
    expect(body).toContain('::ffff:127.0.0.1 is ::ffff:127.0.0.1 (loopback: IPv4-mapped 127.0.0.1 inside)');
    const named = refusalBody({
      host: 'mapped.test',
      port: 80,
      method: 'GET',
      allowed: false,
      reason: 'private_address',
      address: '::ffff:127.0.0.1',
      kind: 'loopback',
    });
    expect(named).toContain('mapped.test resolves to ::ffff:127.0.0.1 (loopback)');
  });
});
