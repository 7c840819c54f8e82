// Tool results are typed by their output schemas (tools/define.ts ToolDef<Input, Output>, core/lean.ts Lean<T>):
// the `@ts-expect-error` lines below are checked by `npm run typecheck` (tsconfig includes test/), which fails
// if one of them stops being an error; the tests check that lean()'s run time does what its type says.
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { lean } from '../../src/core/lean.js';
import { defineTool, READ_ONLY } from '../../src/tools/define.js';
import { erase } from '../../src/tools/registry.js';

const output = z.object({ n: z.number(), note: z.string().optional() });
const base = { title: 'T', description: 'd', uses: [], input: z.object({}), output, annotations: READ_ONLY };

describe('typed tool results', () => {
  it('a handler must return its output schema’s shape', () => {
    defineTool({ ...base, name: 'ok_tool', handler: () => ({ structured: { n: 1 }, text: '' }) });
    defineTool({
      ...base,
      name: 'wrong_type',
      handler: () => ({
        structured: {
          // @ts-expect-error a string where the schema says number
          n: 'one',
        },
        text: '',
      }),
    });
    // @ts-expect-error a required field missing
    defineTool({ ...base, name: 'missing', handler: () => ({ structured: { note: 'x' }, text: '' }) });
    expect(true).toBe(true);
  });

  it('lean() may drop a field at its default, so its type makes it optional unless kept', () => {
    const dropped = lean({ n: 0, note: '' });
    expect(dropped).toEqual({});
    // @ts-expect-error n may be left out by lean(): not assignable where n is required
    const wrong: z.output<typeof output> = dropped;
    const kept = lean({ n: 0, note: '' }, ['n']);
    expect(kept).toEqual({ n: 0 });
    const right: z.output<typeof output> = kept;
    expect([wrong, right]).toHaveLength(2);
  });

  it('the registry’s erased tool checks the arguments, then runs the typed handler', async () => {
    const tool = erase(
      defineTool({
        ...base,
        name: 'echo_n',
        input: z.object({ n: z.number() }),
        handler: (args) => ({ structured: { n: args.n }, text: String(args.n) }),
      }),
    );
    const ctx = { runtime: {} } as Parameters<typeof tool.call>[1];
    await expect(tool.call({ n: 3 }, ctx)).resolves.toEqual({ structured: { n: 3 }, text: '3' });
    await expect(tool.call({ n: 'x' }, ctx)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    await expect(tool.call({ n: 1, extra: true }, ctx)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
  });
});
