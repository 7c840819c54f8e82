// A git call re-checks its repository while git runs in its jail (src/git/run.ts, runGit), and that run stops
// when the call's signal aborts. That signal lives as long as the server, so whatever a call hangs on it must
// come off when its run ends: after many git calls it holds no more listeners, and no more signals made from
// it, than after the first. (A signal made with AbortSignal.any() stayed referenced by it, one per call.)
import { getEventListeners } from 'node:events';
import { afterAll, describe, expect, it } from 'vitest';
import { needBwrap } from '../exec/exec-support.js';
import { callTool } from '../helpers/rpc.js';
import { startInProcess, type InProcessServer } from '../helpers/server.js';
import { makeWorkspace, type TempWorkspace } from '../helpers/workspace.js';

const d = needBwrap('git calls re-checked while git runs in its jail') ? describe : describe.skip;

d("the server's signal after many git calls", () => {
  let ws: TempWorkspace | undefined;
  let srv: InProcessServer | undefined;
  afterAll(async () => {
    await srv?.close();
    ws?.cleanup();
  });

  it('holds no more listeners and no more signals made from it than after the first call', async () => {
    ws = makeWorkspace({ 'a.txt': 'one\n', 'b.txt': 'two\n' }, { git: true });
    ws.write('a.txt', 'changed\n');
    srv = await startInProcess({ workspace: ws.dir });
    expect(srv.runtime.jail.confining()).toBe(true);
    const signal = srv.runtime.signal;
    const made = () => {
      const key = Object.getOwnPropertySymbols(signal).find((s) => s.description === 'kDependantSignals');
      return key ? ((signal as unknown as Record<symbol, Set<unknown> | undefined>)[key]?.size ?? 0) : 0;
    };
    const held = () => [getEventListeners(signal, 'abort').length, made()];
    for (const tool of ['git_status', 'git_diff'])
      expect((await callTool(srv.url, tool)).isError).toBe(false);
    const before = held();
    for (let i = 0; i < 15; i++) {
      for (const tool of ['git_status', 'git_diff', 'git_log']) {
        const r = await callTool(srv.url, tool);
        expect(r.isError, JSON.stringify(r.structuredContent)).toBe(false);
      }
    }
    expect(held()).toEqual(before);
  });
});
