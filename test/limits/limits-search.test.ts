// README "Limits" and "search_text": the engine is chosen by what is installed, never by what a search found
// (before, a UTF-16 file failed ripgrep's re-verification and the JS engine answered instead, so `engine: "js"`
// told whether a file matched); both engines give the same answer on BOM files (raw bytes: UTF-16 is binary to
// both, as to read_file); the JS engine runs regular expressions in linear time (`(a+)+$` on 'a'×40+'!' froze
// the event loop for good) and refuses what RE2 cannot run by name. The server runs in this process, so this
// process's event-loop delay is the server's.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findRipgrep } from '../../src/workspace/search/engines.js';
import { PROBE_LIMITS } from '../helpers/probed-server.js';
import { callTool } from '../helpers/rpc.js';
import { startInProcess, type InProcessServer } from '../helpers/server.js';
import { makeWorkspace, type TempWorkspace } from '../helpers/workspace.js';

const rg = findRipgrep({ PATH: process.env.PATH ?? '' });
const JS = { kind: 'js' as const };
const utf16 = (s: string) => Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(s, 'utf16le')]);

let ws: TempWorkspace;
let srv: InProcessServer;
beforeAll(async () => {
  ws = makeWorkspace({
    'u16le.txt': utf16('needle in utf-16\n'),
    'u16be.txt': Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from('needle be\n', 'utf16le').swap16()]),
    'bom8.txt': Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('needle after a BOM\n')]),
    'plain.txt': 'a needle\n',
    'evil.txt': 'a'.repeat(40) + '!\n',
  });
  srv = await startInProcess({ workspace: ws.dir });
});
afterAll(async () => {
  srv.runtime.search.use(rg);
  await srv.close();
  ws.cleanup();
});

const search = (args: Record<string, unknown>) => callTool(srv.url, 'search_text', args);

describe.skipIf(rg.kind !== 'ripgrep')('ripgrep answers whatever the files contain', () => {
  it('UTF-16 and UTF-8 BOM files: ripgrep answers (no engine switch), the JS engine answers the same', async () => {
    srv.runtime.search.use(rg);
    const a = await search({ query: 'needle' });
    srv.runtime.search.use(JS);
    const b = await search({ query: 'needle' });
    srv.runtime.search.use(rg);
    expect(a.structuredContent.engine).toBeUndefined();
    expect(b.structuredContent.engine).toBe('js');
    expect({ ...b.structuredContent, engine: undefined }).toEqual({
      ...a.structuredContent,
      engine: undefined,
    });
    expect(a.structuredContent.matches).toEqual([
      { path: 'bom8.txt', line: 1, column: 2, preview: '\ufeffneedle after a BOM' },
      { path: 'plain.txt', line: 1, column: 3, preview: 'a needle' },
    ]);
  });
});

describe('the JS engine', () => {
  it('runs (a+)+$ on a hostile line promptly, without holding the event loop', async () => {
    srv.runtime.search.use(JS);
    const h = monitorEventLoopDelay({ resolution: 10 });
    h.enable();
    const r = await search({ query: '(a+)+$', regex: true, path: 'evil.txt' });
    h.disable();
    srv.runtime.search.use(rg);
    expect(r.isError).toBe(false);
    expect(r.structuredContent.matches).toBeUndefined(); // 'a'×40 then '!': no match, and no backtracking
    expect(h.max / 1e6, 'longest event-loop delay (ms)').toBeLessThan(PROBE_LIMITS.maxDelayMs);
  });

  it('matches what RE2 can run the way ripgrep does (\\d, \\w, \\u escapes, classes)', async () => {
    srv.runtime.search.use(JS);
    const r = await search({ query: '\\u0061 \\w+dle$', regex: true, path: 'plain.txt' });
    srv.runtime.search.use(rg);
    expect(r.structuredContent.matches).toEqual([
      { path: 'plain.txt', line: 1, column: 1, preview: 'a needle' },
    ]);
  });

  const REFUSED: Array<[string, RegExp]> = [
    ['(?=needle)', /look-around/],
    ['(?<!a )needle', /look-around/],
    ['(n)\\1', /backreference/],
  ];
  it.each(REFUSED)('refuses %s by name, as ripgrep does (INVALID_ARGUMENT)', async (query, why) => {
    for (const engine of rg.kind === 'ripgrep' ? [rg, JS] : [JS]) {
      srv.runtime.search.use(engine);
      const r = await search({ query, regex: true });
      expect(r.structuredContent.error?.code, engine.kind).toBe('INVALID_ARGUMENT');
      expect(r.structuredContent.error.message, engine.kind).toMatch(why);
    }
    srv.runtime.search.use(rg);
  });
});
