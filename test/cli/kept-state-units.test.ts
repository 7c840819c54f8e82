// The parts of kept credentials, waits that talk and the request log that are decided by a value, not by a
// process: how refused credentials are rate-limited (an injected clock), how a failure to reach the tunnel is
// explained, what the grant store writes and reads back, and how the program names itself (self.ts).
import { chmodSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { selfCommand, shellWord } from '../../src/cli/self.js';
import { explainFailure } from '../../src/cli/tunnel/wait.js';
import { ManualClock } from '../../src/core/clock.js';
import type { Logger } from '../../src/core/log.js';
import { RefusalLog } from '../../src/http/request-log.js';
import {
  GrantStore,
  MAX_KEPT_FAMILIES,
  REFRESH_TOKEN_TTL_MS,
  type GrantPersistence,
} from '../../src/oauth/grants/grants.js';
import { systemRandom } from '../../src/oauth/secrets.js';
import { REPO_ROOT } from '../helpers/server.js';

const dir = mkdtempSync(path.join(tmpdir(), 'wb-units-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function recorder(): { log: Logger; lines: string[] } {
  const lines: string[] = [];
  const put = (m: string) => void lines.push(m);
  return { lines, log: { debug: put, info: put, warn: put, error: put } };
}

describe('refused credentials: counted, logged at once, then at most one summary per window', () => {
  it('a burst gives one line now and one summary when the window ends; a quiet spell resets', () => {
    const clock = new ManualClock();
    const { log, lines } = recorder();
    let scheduled: (() => void) | undefined;
    const refusals = new RefusalLog(log, clock, 60_000, (fn) => {
      scheduled = fn;
      return () => (scheduled = undefined);
    });
    refusals.note('127.0.0.1, user-agent "a"', 'The bearer token is not valid for this server.');
    expect(lines).toEqual([
      'refused a credential from 127.0.0.1, user-agent "a": The bearer token is not valid for this server. (1 refused since start)',
    ]);
    for (let i = 0; i < 5; i++) {
      clock.advance(1000);
      refusals.note(`10.0.0.${i}`, 'the access token has expired; refresh it or authorize again');
    }
    expect(lines).toHaveLength(1);
    expect(scheduled).toBeDefined();
    clock.advance(55_000);
    scheduled?.();
    expect(lines[1]).toBe(
      'refused 5 credentials in the last 60 s, the last from 10.0.0.4: the access token has expired; refresh it or authorize again (6 refused since start)',
    );
    expect(refusals.total).toBe(6);
    clock.advance(61_000);
    refusals.note('127.0.0.1', 'x');
    expect(lines[2]).toBe('refused a credential from 127.0.0.1: x (7 refused since start)');
  });
});

describe('why the tunnel does not answer, in words', () => {
  it.each([
    [
      'EAI_AGAIN',
      /cannot be resolved yet \(EAI_AGAIN: the DNS resolver gave no answer\).*\/etc\/resolv\.conf/,
    ],
    ['ENOTFOUND', /does not exist yet \(ENOTFOUND: the DNS resolver knows no such name\)/],
    ['SELF_SIGNED_CERT_IN_CHAIN', /TLS certificate is not trusted .*NODE_EXTRA_CA_CERTS/],
    ['HTTP 530', /the tunnel answered HTTP 530: it is not connected to the server yet/],
    ['HTTP 404', /answered HTTP 404, not this server's card/],
    ['no answer (timeout)', /no answer \(timeout\)/],
    ['no attempt yet', /^no answer yet$/],
  ])('%s', (last, re) => {
    expect(explainFailure(last, 'abc-def-ghi.trycloudflare.com')).toMatch(re);
  });
});

describe('kept OAuth grants (refresh-token digests of clients that outlive the process)', () => {
  function file(keeps = (id: string) => id.startsWith('https://')) {
    let text: string | undefined;
    const p: GrantPersistence & { text(): string | undefined } = {
      keeps,
      load: () => text,
      save: (t) => void (text = t),
      text: () => text,
    };
    return p;
  }
  const flush = () => new Promise((r) => setTimeout(r, 0));

  it('writes kept clients only, digests only, and a new store reads them back', async () => {
    const clock = new ManualClock();
    const persist = file();
    const store = new GrantStore(clock, systemRandom, undefined, persist);
    const doc = store.start(
      'https://claude.ai/oauth/claude-code-client-metadata',
      'https://x.example/mcp',
      undefined,
    );
    const refresh = store.issueRefresh(doc);
    const dyn = store.start('dyn-client', 'https://x.example/mcp', undefined);
    store.issueRefresh(dyn);
    await flush();
    const text = persist.text() as string;
    expect(text).not.toContain(refresh);
    expect(text).not.toContain('dyn-client');
    const again = new GrantStore(clock, systemRandom, undefined, persist);
    const found = again.findRefresh(refresh);
    expect(found.status).toBe('current');
    expect(again.isActive(doc.id)).toBe(true);
    expect(again.isActive(dyn.id)).toBe(false);
    // A revoked grant leaves the file too.
    again.revoke(doc.id);
    await flush();
    expect(new GrantStore(clock, systemRandom, undefined, persist).isActive(doc.id)).toBe(false);
  });

  it('expired grants are not read back; the file is bounded; a damaged file is ignored', async () => {
    const clock = new ManualClock();
    const persist = file();
    const store = new GrantStore(clock, systemRandom, undefined, persist);
    const first = store.start('https://a.example/c.json', 'https://x.example/mcp', undefined);
    store.issueRefresh(first);
    for (let i = 0; i < MAX_KEPT_FAMILIES + 10; i++)
      store.issueRefresh(store.start(`https://a.example/${i}.json`, 'https://x.example/mcp', undefined));
    await flush();
    const kept = JSON.parse(persist.text() as string).families as unknown[];
    expect(kept).toHaveLength(MAX_KEPT_FAMILIES);
    expect(new GrantStore(clock, systemRandom, undefined, persist).isActive(first.id)).toBe(false); // oldest out
    clock.advance(REFRESH_TOKEN_TTL_MS + 1);
    expect(new GrantStore(clock, systemRandom, undefined, persist).size).toBe(0);
    for (const bad of ['{', '[]', '{"version":2,"families":[]}', '{"version":1,"families":[{"id":"x"}]}']) {
      const p = file();
      p.save(bad);
      expect(new GrantStore(clock, systemRandom, undefined, p).size).toBe(0);
    }
  });
});

describe('the command printed for the user (src/cli/self.ts)', () => {
  // Every PATH here is made of directories this test makes: whether the user ran `npm link` (which puts a
  // workbench-mcp in the global bin, often /usr/bin or /usr/local/bin) must not change what is tested.
  const fakeMain = (root: string) => {
    const main = path.join(root, 'dist/cli/main.js');
    mkdirSync(path.dirname(main), { recursive: true });
    writeFileSync(main, '');
    return main;
  };
  const binDir = (name: string, links: Record<string, string> = {}) => {
    const bin = path.join(dir, name);
    mkdirSync(bin, { recursive: true });
    for (const [cli, target] of Object.entries(links)) symlinkSync(target, path.join(bin, cli));
    return bin;
  };
  const empty = binDir('bin-empty');

  it('node <absolute path> for a checkout; quoted when it needs it', () => {
    const main = fakeMain(path.join(dir, 'my checkout'));
    expect(selfCommand(empty, main)).toBe(`node '${main}'`);
    expect(shellWord("it's")).toBe(`'it'\\''s'`);
    expect(shellWord('/plain/path-1.js')).toBe('/plain/path-1.js');
  });

  it('workbench-mcp when that name on PATH is this installation (npm link, npm install -g), not another one', () => {
    const main = fakeMain(path.join(dir, 'linked'));
    chmodSync(main, 0o755);
    const bin = binDir('bin-linked', { 'workbench-mcp': main });
    expect(selfCommand(`${empty}:${bin}`, main)).toBe('workbench-mcp');
    const other = fakeMain(path.join(dir, 'other'));
    expect(selfCommand(`${empty}:${bin}`, other)).toBe(`node ${other}`);
    // The first workbench-mcp on PATH is the one the shell runs: another installation before this one wins.
    chmodSync(other, 0o755);
    const shadow = binDir('bin-other', { 'workbench-mcp': other });
    expect(selfCommand(`${shadow}:${bin}`, main)).toBe(`node ${main}`);
    expect(selfCommand(`${shadow}:${bin}`, other)).toBe('workbench-mcp');
    // npx and `npm start` put node_modules/.bin on PATH for their own run only: not the user's command.
    const npxBin = path.join(dir, 'npx-cache/node_modules/.bin');
    mkdirSync(npxBin, { recursive: true });
    symlinkSync(main, path.join(npxBin, 'workbench-mcp'));
    expect(selfCommand(`${npxBin}:${empty}`, main)).toBe(`node ${main}`);
  });

  it('this build, linked the way `npm link` links it and not linked: what --help names', () => {
    const main = path.join(REPO_ROOT, 'dist/cli/main.js');
    const help = (PATH: string) =>
      spawnSync(process.execPath, [main, '--help'], { env: { PATH }, encoding: 'utf8' }).stdout;
    const linked = binDir('bin-npm-link', { 'workbench-mcp': main });
    expect(selfCommand(`${empty}:${linked}`, main)).toBe('workbench-mcp');
    expect(help(`${empty}:${linked}`)).toContain('(as installed here, workbench-mcp is: workbench-mcp)');
    const node = `node ${shellWord(realpathSync(main))}`;
    expect(selfCommand(empty, main)).toBe(node);
    expect(help(empty)).toContain(`(as installed here, workbench-mcp is: ${node})`);
  });

  it('npx workbench-mcp only for a package installed from a registry', () => {
    for (const [resolved, want] of [
      ['https://registry.npmjs.org/workbench-mcp/-/workbench-mcp-0.3.0.tgz', 'npx workbench-mcp'],
      ['file:../workbench-mcp-0.3.0.tgz', undefined],
    ] as const) {
      const prefix = path.join(dir, `prefix-${want ? 'registry' : 'file'}`);
      const main = fakeMain(path.join(prefix, 'node_modules/workbench-mcp'));
      writeFileSync(
        path.join(prefix, 'node_modules/.package-lock.json'),
        JSON.stringify({ packages: { 'node_modules/workbench-mcp': { resolved } } }),
      );
      expect(selfCommand(empty, main)).toBe(want ?? `node ${main}`);
    }
  });
});
