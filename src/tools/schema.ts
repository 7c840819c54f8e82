// Advertised schemas are generated from the same zod schemas that validate (one source). outputSchema is
// `anyOf` the success shape and the shared error shape (`ok: false, error{code, message, category, retryable,
// details}`), because the v1 client validates structuredContent even when isError is true
// (docs/design-notes.md#output-schemas-accept-errors). Validation failures become INVALID_ARGUMENT tool
// errors.
import * as z from 'zod';
import { ToolError } from '../core/tool-error.js';
import type { AnyToolDef } from './define.js';

export const NEXT_ACTION = z
  .object({ tool: z.string(), arguments: z.record(z.string(), z.unknown()) })
  .describe('A call that continues this one; send it back verbatim.');

type Json = Record<string, unknown>;

/**
 * Drops what validators and models do not need from advertised schemas: `propertyNames` on records; in input
 * schemas the obvious bounds — a count's or line number's lower bound of 0 or 1, a non-empty string's
 * minLength 1, the sanity caps on string lengths and list sizes (the server still checks them all and answers
 * INVALID_ARGUMENT); in output schemas `additionalProperties: false`, so a result may grow a field without
 * breaking older clients. tools/list is the call clients make most; every byte here is
 * sent on each of them.
 */
function slim(node: unknown, io: 'input' | 'output'): void {
  if (Array.isArray(node)) return node.forEach((n) => slim(n, io));
  if (!node || typeof node !== 'object') return;
  const o = node as Json;
  delete o.propertyNames;
  if (o.maximum === Number.MAX_SAFE_INTEGER) delete o.maximum;
  if (o.minimum === Number.MIN_SAFE_INTEGER) delete o.minimum;
  if (io === 'input') {
    if (o.type === 'integer' && (o.minimum === 0 || o.minimum === 1)) delete o.minimum;
    if (o.type === 'array') delete o.maxItems;
    if (o.type === 'string') delete o.maxLength;
    if (o.minLength === 1) delete o.minLength;
  }
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

export function inputJsonSchema(def: Pick<AnyToolDef, 'input' | 'output'>): Json {
  const js = toJson(def.input, 'input');
  js.additionalProperties = false;
  if (!Array.isArray(js.required)) js.required = [];
  return js;
}

/** One result field as an output schema advertises it: its type only (`anyOf` of types for a union). */
function typeOnly(node: Json): Json {
  if (node.type !== undefined) return { type: node.type };
  if (Array.isArray(node.anyOf)) return { anyOf: (node.anyOf as Json[]).map(typeOnly) };
  if (node.const !== undefined) return { const: node.const };
  return { type: 'object' };
}

/**
 * The error branch, the same for every tool (docs/design-notes.md#output-schemas-accept-errors): an error
 * result has `ok` (false) and `error`. Its fields are those of docs/tools.md#results-and-errors and not
 * repeated in every tool's schema: the success branch requires `ok: true`, so only an error result needs this
 * one.
 */
const ERROR_BRANCH: Json = { required: ['ok', 'error'] };

/**
 * Output schemas name every top-level result field with its type only; `required` lists what every success
 * carries, and a field a result may leave out (docs/design-notes.md#lean-results) is optional: no type
 * arrays, no `null`. Nested objects and arrays are advertised by type. Clients validate structuredContent
 * against them (the v1 SDK even on errors, hence `anyOf` with the error branch); tools/list is the call every
 * client makes first and most.
 */
const ALWAYS_PRESENT = new Set(['status', 'command_id']);

export function outputJsonSchema(def: Pick<AnyToolDef, 'input' | 'output'>): Json {
  const js = toJson(def.output, 'output');
  const props = Object.entries((js.properties ?? {}) as Record<string, Json>);
  const success: Json = {
    properties: { ok: { const: true }, ...Object.fromEntries(props.map(([k, v]) => [k, typeOnly(v)])) },
    // Only what every result of every tool carries is listed as required (docs/design-notes.md#lean-results):
    // the names and types above tell a client what may come; a list of every always-present field of every
    // tool cost ~800 bytes.
    required: ['ok', ...((js.required as string[] | undefined) ?? []).filter((k) => ALWAYS_PRESENT.has(k))],
  };
  return { type: 'object', anyOf: [success, ERROR_BRANCH] };
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
