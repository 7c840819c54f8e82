// Advertised schemas are generated from the same zod schemas that validate (one source). outputSchema is
// `anyOf` the success shape and the shared error shape, because the v1 client validates structuredContent
// even when isError is true (decisions.md 13). Validation failures become INVALID_ARGUMENT tool errors.
import { z } from 'zod';
import { ToolError } from '../core/tool-error.js';
import type { ToolDef } from './define.js';

export const ERROR_SHAPE = z.object({
  ok: z.literal(false),
  error: z.object({
    code: z.string(),
    message: z.string(),
    category: z.enum([
      'validation',
      'security',
      'permission',
      'runtime',
      'not_found',
      'conflict',
      'internal',
    ]),
    retryable: z.boolean(),
    details: z.record(z.string(), z.unknown()),
  }),
});

export const NEXT_ACTION = z
  .object({ tool: z.string(), arguments: z.record(z.string(), z.unknown()) })
  .describe('A call that continues this one; send it back verbatim.');

type Json = Record<string, unknown>;

/**
 * Drops what validators do not need from advertised schemas: `propertyNames` on records, and (in output
 * schemas) `additionalProperties: false`, so a result may grow a field without breaking older clients.
 * tools/list is the call clients make most; every byte here is sent on each of them.
 */
function slim(node: unknown, io: 'input' | 'output'): void {
  if (Array.isArray(node)) return node.forEach((n) => slim(n, io));
  if (!node || typeof node !== 'object') return;
  const o = node as Json;
  delete o.propertyNames;
  if (o.maximum === Number.MAX_SAFE_INTEGER) delete o.maximum;
  if (o.minimum === Number.MIN_SAFE_INTEGER) delete o.minimum;
  if (io === 'output' && o.additionalProperties === false) delete o.additionalProperties;
  if (
    o.additionalProperties &&
    typeof o.additionalProperties === 'object' &&
    Object.keys(o.additionalProperties).length === 0
  )
    delete o.additionalProperties;
  for (const v of Object.values(o)) slim(v, io);
}

function toJson(schema: z.ZodType, io: 'input' | 'output'): Json {
  const js = z.toJSONSchema(schema, { target: 'draft-7', io, unrepresentable: 'any' }) as Json;
  delete js.$schema;
  slim(js, io);
  return js;
}

export function inputJsonSchema(def: ToolDef): Json {
  const js = toJson(def.input, 'input');
  js.additionalProperties = false;
  if (!Array.isArray(js.required)) js.required = [];
  return js;
}

/**
 * Output schemas name every top-level result field with its type; nested objects and arrays are advertised by
 * type only. Clients validate structuredContent against them (the v1 SDK even on errors) and models read the
 * field names; the nested detail tripled tools/list, the call every client makes first and most often.
 */
function collapse(node: Json, depth: number): Json {
  if (depth >= 2) {
    if (Array.isArray(node.anyOf)) return { anyOf: (node.anyOf as Json[]).map((n) => collapse(n, depth)) };
    return node.type !== undefined ? { type: node.type } : {};
  }
  const out: Json = { ...node };
  delete out.description;
  if (out.properties && typeof out.properties === 'object') {
    out.properties = Object.fromEntries(
      Object.entries(out.properties as Record<string, Json>).map(([k, v]) => [k, collapse(v, depth + 1)]),
    );
  }
  if (out.items && typeof out.items === 'object') out.items = collapse(out.items as Json, depth + 1);
  if (Array.isArray(out.anyOf)) out.anyOf = (out.anyOf as Json[]).map((n) => collapse(n, depth));
  return out;
}

export function outputJsonSchema(def: ToolDef): Json {
  const success = def.output.extend({ ok: z.literal(true) });
  return {
    type: 'object',
    anyOf: [collapse(toJson(success, 'output'), 0), collapse(toJson(ERROR_SHAPE, 'output'), 0)],
  };
}

function describeIssue(issue: z.core.$ZodIssue): string {
  const where = issue.path.length ? issue.path.join('.') : 'arguments';
  if (issue.code === 'unrecognized_keys')
    return `unknown argument(s) ${issue.keys.map((k) => JSON.stringify(k)).join(', ')}`;
  return `${where}: ${issue.message}`;
}

/** Validates `raw` against a tool's (strict) input schema; failures are INVALID_ARGUMENT naming each problem. */
export function parseArgs<I extends z.ZodObject>(tool: string, input: I, raw: unknown): z.output<I> {
  const r = input.safeParse(raw ?? {});
  if (r.success) return r.data;
  const problems = r.error.issues.map(describeIssue);
  const known = Object.keys(input.shape);
  throw new ToolError(
    'INVALID_ARGUMENT',
    `invalid arguments for ${tool}: ${problems.join('; ')}`,
    { problems, accepted_arguments: known },
    { suggestion: `Call ${tool} again with corrected arguments; it accepts: ${known.join(', ')}.` },
  );
}
