// Advertised schemas are generated from the same zod schemas that validate (one source). outputSchema is
// `anyOf` the success shape and the shared error shape, because the v1 client validates structuredContent
// even when isError is true (decisions.md 13). Validation failures become INVALID_ARGUMENT tool errors.
import { z } from 'zod';
import { ToolError, ALL_TOOL_ERROR_CODES } from '../core/tool-error.js';
import type { ToolDef } from './define.js';

export const ERROR_SHAPE = z.object({
  ok: z.literal(false),
  error: z.object({
    code: z.enum(ALL_TOOL_ERROR_CODES as [string, ...string[]]),
    message: z.string(),
    category: z.enum(['validation', 'security', 'permission', 'runtime', 'not_found', 'conflict', 'internal']),
    retryable: z.boolean(),
    details: z.record(z.string(), z.unknown()),
  }),
});

export const NEXT_ACTION = z
  .object({ tool: z.string(), arguments: z.record(z.string(), z.unknown()) })
  .describe('A call that continues this one; send it back verbatim.');

type Json = Record<string, unknown>;

function toJson(schema: z.ZodType, io: 'input' | 'output'): Json {
  const js = z.toJSONSchema(schema, { target: 'draft-7', io, unrepresentable: 'any' }) as Json;
  delete js.$schema;
  return js;
}

export function inputJsonSchema(def: ToolDef): Json {
  const js = toJson(def.input, 'input');
  js.additionalProperties = false;
  if (!Array.isArray(js.required)) js.required = [];
  return js;
}

export function outputJsonSchema(def: ToolDef): Json {
  const success = def.output.extend({ ok: z.literal(true) });
  return { type: 'object', anyOf: [toJson(success, 'output'), toJson(ERROR_SHAPE, 'output')] };
}

function describeIssue(issue: z.core.$ZodIssue): string {
  const where = issue.path.length ? issue.path.join('.') : 'arguments';
  if (issue.code === 'unrecognized_keys') return `unknown argument(s) ${issue.keys.map((k) => JSON.stringify(k)).join(', ')}`;
  return `${where}: ${issue.message}`;
}

export function parseArgs<I extends z.ZodObject>(def: ToolDef<I>, raw: unknown): z.output<I> {
  const r = def.input.safeParse(raw ?? {});
  if (r.success) return r.data;
  const problems = r.error.issues.map(describeIssue);
  const known = Object.keys(def.input.shape);
  throw new ToolError(
    'INVALID_ARGUMENT',
    `invalid arguments for ${def.name}: ${problems.join('; ')}`,
    { problems, accepted_arguments: known },
    { suggestion: `Call ${def.name} again with corrected arguments; it accepts: ${known.join(', ')}.` },
  );
}
