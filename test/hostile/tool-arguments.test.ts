// Arguments for every tool (types, sizes, unicode, NUL): property-based, over real HTTP on 127.0.0.1. The
// catalog is taken from tools/list at test time and arguments are generated from each advertised inputSchema,
// on the schema (hostile strings, paths, huge values, unicode, NUL, lone surrogates) and off it (wrong types,
// out of range, unknown or missing properties). Every call is answered with a result or a tool error whose
// code is in the documented closed set and fits the tool (docs/tools.md#results-and-errors), never
// INTERNAL_ERROR, never a logged server error; every result validates against the tool's outputSchema
// (docs/design-notes.md#output-schemas-accept-errors); the workspace (a git repository) and a sibling
// directory of canary files are snapshotted before and after each call and must not change; a valid call
// after each property proves the server still serves. exec_command and write_stdin never get a generated
// string that could run: only schema violations, with fixed harmless values for what they require
// (tool-paths.test.ts has their fixed commands).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { argumentsFromSchema, hostileString, wrongType, type Json } from './arbitraries.js';
import { fcParams, stillServing } from './support.js';
import { ALLOWED, NO_GENERATED_STRINGS, SAFE_REQUIRED, toolHarness, type Tool } from './tool-harness.js';

const H = toolHarness();

describe("on-schema arguments generated from each tool's inputSchema (tools/list)", () => {
  it('the catalog is the documented 20 tools, so every tool below is covered', () => {
    expect(H.tools.map((t) => t.name).sort()).toEqual(Object.keys(ALLOWED).sort());
  });

  // 16 tools × 40 runs; exec_command, write_stdin and edit_file get only the violations below (never generated
  // strings).
  for (const name of Object.keys(ALLOWED).filter((n) => !NO_GENERATED_STRINGS.has(n))) {
    it(`${name}: generated arguments → a result or a specific error, nothing changed (docs/tools.md#results-and-errors)`, async () => {
      const t = H.tool(name);
      // apply_patch: random text is never a valid patch (patches.test.ts makes real ones); dry_run varies.
      const args = argumentsFromSchema(t.inputSchema, H.ctx());
      await fc.assert(
        fc.asyncProperty(args, async (a) => {
          await H.checkedCall(name, a);
        }),
        fcParams(40),
      );
      await stillServing(H.srv.url);
    });
  }
});

describe('off-schema arguments are INVALID_ARGUMENT (docs/tools.md#results-and-errors)', () => {
  /** Arguments that violate the advertised schema in exactly one way; required ones otherwise fixed and safe. */
  function violation(t: Tool): fc.Arbitrary<{ args: unknown; why: string }> {
    const props = (t.inputSchema.properties ?? {}) as Record<string, Json>;
    const required = (t.inputSchema.required ?? []) as string[];
    const base = Object.fromEntries(required.map((k) => [k, SAFE_REQUIRED[k]]));
    const options: Array<fc.Arbitrary<{ args: unknown; why: string }>> = [
      fc
        .tuple(
          hostileString.filter((k) => !(k in props) && k !== '__proto__'),
          fc.jsonValue(),
        )
        .map(([k, v]) => ({ args: { ...base, [k]: v }, why: `unknown property ${JSON.stringify(k)}` })),
      fc
        .oneof(fc.array(fc.jsonValue(), { maxLength: 3 }), fc.string(), fc.integer(), fc.boolean())
        .map((v) => ({ args: v, why: 'arguments is not an object' })),
    ];
    const keys = Object.keys(props);
    if (keys.length)
      options.push(
        fc
          .constantFrom(...keys)
          .chain((k) =>
            wrongType(props[k] as Json).map((v) => ({ args: { ...base, [k]: v }, why: `${k} off-schema` })),
          ),
      );
    if (required.length)
      options.push(
        fc.constantFrom(...required).map((k) => {
          const a: Record<string, unknown> = { ...base };
          delete a[k];
          return { args: a, why: `required ${k} missing` };
        }),
      );
    return fc.oneof(...options);
  }

  it('every tool (incl. exec_command and write_stdin), one violation per call → INVALID_ARGUMENT', async () => {
    const arb = fc
      .constantFrom(...H.tools.map((t) => t.name))
      .chain((name) => violation(H.tool(name)).map((c) => ({ name, ...c })));
    await fc.assert(
      fc.asyncProperty(arb, async ({ name, args, why }) => {
        const { v } = await H.checkedCall(name, args, ['INVALID_ARGUMENT']);
        expect(v, `${name} (${why}) ${JSON.stringify(args)?.slice(0, 300)}`).toMatchObject({
          kind: 'tool',
          code: 'INVALID_ARGUMENT',
        });
      }),
      fcParams(200),
    );
    await stillServing(H.srv.url);
  });
});
