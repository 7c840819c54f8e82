// Each tool declares the services it uses (tools/define.ts `uses`) and is handed those alone: the
// `@ts-expect-error` lines below are checked by `npm run typecheck` (tsconfig includes test/), which fails if one
// of them stops being an error; the tests check that the registry (tools/registry.ts) builds each tool's
// `ctx.runtime` from a real server with exactly the declared keys.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { STDIO_PRINCIPAL } from '../../src/core/principal.js';
import { runGit } from '../../src/git/run.js';
import { defineTool, READ_ONLY, type ServiceName, type ToolContext } from '../../src/tools/define.js';
import { ALL_TOOLS, erase } from '../../src/tools/registry.js';
import { startInProcess, type InProcessServer } from '../helpers/server.js';
import { makeWorkspace, type TempWorkspace } from '../helpers/workspace.js';

const output = z.object({ keys: z.array(z.string()) });
const base = { title: 'T', description: 'd', input: z.object({}), output, annotations: READ_ONLY };
const done = { structured: { keys: [] }, text: '' };

describe('a tool touches only the services it declares (type checks)', () => {
  it('an undeclared service, a wider handler context or an unknown name does not compile', () => {
    defineTool({
      ...base,
      name: 'reads_root',
      uses: ['root'],
      handler: (_args, ctx) => {
        void ctx.runtime.root.real;
        // @ts-expect-error `commands` was not declared in uses
        void ctx.runtime.commands;
        return done;
      },
    });
    defineTool({
      ...base,
      name: 'declares_nothing',
      uses: [],
      handler: (_args, ctx) => {
        // @ts-expect-error no service declared: the context has none
        void ctx.runtime.config;
        return done;
      },
    });
    defineTool({
      ...base,
      name: 'wider_handler',
      uses: ['root'],
      // @ts-expect-error a handler asking for more than uses gives is refused, not trusted
      handler: (_args, ctx: ToolContext<'root' | 'commands'>) => {
        void ctx.runtime.commands;
        return done;
      },
    });
    defineTool({
      ...base,
      name: 'unknown_service',
      // @ts-expect-error uses names ToolServices' members only
      uses: ['root', 'database'],
      handler: () => done,
    });
    expect(true).toBe(true);
  });

  it('a context without the jail cannot run git (git/run.ts GitHost: git would run unconfined)', () => {
    defineTool({
      ...base,
      name: 'git_without_jail',
      uses: ['root', 'config', 'dirs', 'signal'],
      handler: async (_args, ctx) => {
        // @ts-expect-error `jail` is required by runGit and was not declared
        await runGit(ctx.runtime, ['status'], { cwd: ctx.runtime.root.real, pin: null, filterArgs: [] });
        return done;
      },
    });
    expect(true).toBe(true);
  });
});

describe('the registry hands each tool only its declared services', () => {
  let ws: TempWorkspace;
  let srv: InProcessServer;
  beforeAll(async () => {
    ws = makeWorkspace({ 'a.txt': 'a\n' });
    srv = await startInProcess({ workspace: ws.dir });
  });
  afterAll(async () => {
    await srv.close();
    ws.cleanup();
  });

  /** A tool that keeps the context it was handed. */
  function probe<const U extends ServiceName = never>(uses: readonly U[]) {
    const seen: Array<ToolContext<U>['runtime']> = [];
    const tool = erase(
      defineTool({
        ...base,
        name: 'probe',
        uses,
        handler: (_args, ctx) => {
          seen.push(ctx.runtime);
          return { structured: { keys: Object.keys(ctx.runtime) }, text: '' };
        },
      }),
    );
    const call = () =>
      tool.call({}, { runtime: srv.runtime, principal: STDIO_PRINCIPAL, signal: srv.runtime.signal });
    return { call, seen };
  }

  it('an object with exactly the declared keys, not the runtime: values the same, methods bound', async () => {
    const p = probe(['root', 'sandboxStatus', 'signal']);
    const r = await p.call();
    expect([...(r.structured.keys as string[])].sort()).toEqual(['root', 'sandboxStatus', 'signal']);
    const got = p.seen[0];
    if (!got) throw new Error('the handler did not run');
    expect(got).not.toBe(srv.runtime);
    expect(Object.getPrototypeOf(got)).toBe(Object.prototype);
    expect(Object.isFrozen(got)).toBe(true);
    for (const other of ['commands', 'config', 'grants', 'jail', 'approvals', 'edits', 'audit', 'shutdown'])
      expect(other in got, other).toBe(false);
    expect(got.root).toBe(srv.runtime.root);
    expect(got.signal).toBe(srv.runtime.signal);
    // A method taken off the runtime still runs against it.
    const { sandboxStatus } = got;
    expect(sandboxStatus()).toEqual(srv.runtime.sandboxStatus());
  });

  it('the same object on every call to one server; none at all for a tool that declares none', async () => {
    const p = probe(['root', 'commands']);
    await p.call();
    await p.call();
    expect(p.seen).toHaveLength(2);
    expect(p.seen[0]).toBe(p.seen[1]);
    const none = probe([]);
    expect((await none.call()).structured.keys).toEqual([]);
  });

  it('every tool of the build declares services the runtime has, each once', () => {
    for (const t of ALL_TOOLS) {
      expect(new Set(t.uses).size, t.name).toBe(t.uses.length);
      for (const name of t.uses) expect(name in srv.runtime, `${t.name}: ${name}`).toBe(true);
    }
    // The git tools run git, which needs the jail in their context.
    for (const t of ALL_TOOLS.filter((t) => t.name.startsWith('git_')))
      expect(t.uses, t.name).toContain('jail');
  });
});
