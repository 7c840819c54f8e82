// Sizes and the report of the dogfood benchmark: tools/list broken down per tool and per part, per-call and
// per-scenario byte totals, the table with the Python server's reference figures, and the goals as
// pass/MISS rows. Writes bench/results/dogfood.{json,md} (no absolute machine paths).
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { RESULTS } from '../lib.mjs';

const bytes = (s) => Buffer.byteLength(s, 'utf8');
const json = (v) => (v === undefined ? 0 : bytes(JSON.stringify(v)));
const n = (x) => (x == null ? 'n/a' : x.toLocaleString('en-US'));

/** The reference figures for the Python server (coding-tools-mcp 0.3), 18 tools, same task. */
export const REFERENCE = {
  source: 'Python server coding-tools-mcp 0.3, measured 2026-11',
  tools_list_bytes: 20184,
  description_bytes: 1828,
  input_schema_bytes: 7092,
  output_schema_bytes: 7254,
  task_structured_bytes: 3172,
  task_text_bytes: 1450,
};

const CONSTRAINS = [
  'type',
  'enum',
  'const',
  'anyOf',
  'oneOf',
  'allOf',
  'not',
  'properties',
  'required',
  'items',
  'additionalProperties',
  'minimum',
  'maximum',
  'minLength',
  'maxLength',
  'pattern',
  'format',
  'maxItems',
];

/** The MCP Inspector 2.12 schema-portability warnings: `type` arrays and nodes that constrain nothing. */
function portabilityWarnings(schema) {
  let n = 0;
  const walk = (node) => {
    if (!node || typeof node !== 'object' || Array.isArray(node)) return;
    if (Array.isArray(node.type)) n++;
    if (!CONSTRAINS.some((k) => k in node)) n++;
    for (const v of Object.values(node.properties ?? {})) walk(v);
    if (node.items) walk(node.items);
    if (typeof node.additionalProperties === 'object') walk(node.additionalProperties);
    for (const v of node.anyOf ?? []) walk(v);
  };
  walk(schema);
  return n;
}

export function catalogSizes(tools, wireBytes) {
  const perTool = {};
  const sum = { total: 0, head: 0, description: 0, input: 0, output: 0 };
  for (const t of tools) {
    const row = {
      total: json(t),
      name_title_description_input:
        bytes(t.name) + bytes(t.title ?? '') + bytes(t.description ?? '') + json(t.inputSchema),
      description: bytes(t.description ?? ''),
      input_schema: json(t.inputSchema),
      output_schema: json(t.outputSchema),
      portability_warnings: portabilityWarnings(t.inputSchema) + portabilityWarnings(t.outputSchema),
    };
    perTool[t.name] = row;
    sum.head += row.name_title_description_input;
    sum.description += row.description;
    sum.input += row.input_schema;
    sum.output += row.output_schema;
  }
  return {
    tool_count: tools.length,
    total_bytes: json(tools),
    wire_bytes: wireBytes,
    name_title_description_input_bytes: sum.head,
    description_bytes: sum.description,
    input_schema_bytes: sum.input,
    output_schema_bytes: sum.output,
    portability_warnings: tools.reduce(
      (n, t) => n + portabilityWarnings(t.inputSchema) + portabilityWarnings(t.outputSchema),
      0,
    ),
    per_tool: perTool,
  };
}

const FIELDS = ['request_bytes', 'wire_bytes', 'structured_bytes', 'text_bytes'];
/** The step of a bug-fix task that writes the fix (apply_patch or edit_file). */
const WRITE_STEP = 4;

function totals(calls) {
  const t = { calls: calls.length };
  for (const f of FIELDS) t[f] = calls.reduce((s, c) => s + c[f], 0);
  return t;
}

function groupBy(calls, key) {
  const out = {};
  for (const c of calls) (out[c[key]] ??= []).push(c);
  return Object.fromEntries(Object.entries(out).map(([k, v]) => [k, totals(v)]));
}

function goals(catalog, scenarios, calls) {
  const js = scenarios.js_task;
  const row = (target, measured, limit) => ({ target, measured, limit, pass: measured <= limit });
  /**
   * The task done with edit_file costs no more result bytes than with apply_patch. The tasks differ only in
   * their writing call; the others differ by a few bytes of elapsed_ms, so the writing calls are compared.
   */
  const asCheap = (task, what, fields) => {
    const bytes = (scenario) => {
      const c = calls.find((x) => x.scenario === scenario && x.step === WRITE_STEP);
      return fields.reduce((sum, f) => sum + c[f], 0);
    };
    return row(
      `${task} task, edit_file call: ${what} bytes (limit: the apply_patch call's)`,
      bytes(`${task}_task_edit`),
      bytes(`${task}_task`),
    );
  };
  return [
    row(`tools/list bytes (${catalog.tool_count} tools)`, catalog.total_bytes, 20500),
    row(
      'tools/list name + title + description + input schema bytes',
      catalog.name_title_description_input_bytes,
      14000,
    ),
    row('schema portability warnings (type arrays, untyped nodes)', catalog.portability_warnings, 0),
    row('JS task: structuredContent bytes', js.structured_bytes, 1900),
    row('JS task: text-block bytes', js.text_bytes, 1160),
    asCheap('js', 'structuredContent + text', ['structured_bytes', 'text_bytes']),
    asCheap('py', 'structuredContent + text', ['structured_bytes', 'text_bytes']),
  ];
}

const ratio = (a, b) => (b ? `${(a / b).toFixed(2)}×` : '');

/** The bytes of a bug-fix task's writing call: request / structuredContent / text. */
function writeCall(r, scenario) {
  const c = r.calls.find((x) => x.scenario === scenario && x.step === WRITE_STEP);
  return c ? `${n(c.request_bytes)} / ${n(c.structured_bytes)} / ${n(c.text_bytes)}` : 'n/a';
}

function markdown(r) {
  const { catalog: c, scenarios: s, reference: ref } = r;
  const lines = [
    '# Dogfood benchmark: what a model pays to use the server',
    '',
    `Measured ${r.environment.date.slice(0, 10)} on Node ${r.environment.node}, MCP calls only (no model), against`,
    'the built server over HTTP. Fixtures are made at run time: a JS project whose `node test/math.test.js` fails',
    '(`add` subtracts) and a Python project whose `python3 -m unittest` fails (`triangle_area` forgets the half).',
    'Wire bytes are the HTTP response bodies; structuredContent bytes are `JSON.stringify(structuredContent)`',
    '(what Claude Code and Codex show the model); text bytes are the text blocks (what Gemini CLI shows).',
    '',
    `| | ${ref.source} | us, this run | ratio |`,
    '|---|---|---|---|',
    `| \`tools/list\` bytes (18 / ${c.tool_count} tools) | ${n(ref.tools_list_bytes)} | ${n(c.total_bytes)} | ${ratio(c.total_bytes, ref.tools_list_bytes)} |`,
    `| … of which descriptions / input schemas / output schemas | ${n(ref.description_bytes)} / ${n(ref.input_schema_bytes)} / ${n(ref.output_schema_bytes)} | ${n(c.description_bytes)} / ${n(c.input_schema_bytes)} / ${n(c.output_schema_bytes)} | |`,
    `| task (JS, 6 calls): \`structuredContent\` bytes | ${n(ref.task_structured_bytes)} | ${n(s.js_task.structured_bytes)} | ${ratio(s.js_task.structured_bytes, ref.task_structured_bytes)} |`,
    `| task (JS, 6 calls): text-block bytes | ${n(ref.task_text_bytes)} | ${n(s.js_task.text_bytes)} | ${ratio(s.js_task.text_bytes, ref.task_text_bytes)} |`,
    `| task (Python, 6 calls): \`structuredContent\` / text bytes | | ${n(s.py_task.structured_bytes)} / ${n(s.py_task.text_bytes)} | |`,
    `| task with \`edit_file\` instead of \`apply_patch\` (JS / Python): \`structuredContent\` bytes | | ${n(s.js_task_edit.structured_bytes)} / ${n(s.py_task_edit.structured_bytes)} | |`,
    `| … text bytes | | ${n(s.js_task_edit.text_bytes)} / ${n(s.py_task_edit.text_bytes)} | |`,
    `| … the writing call alone, apply_patch vs edit_file (JS): request / \`structuredContent\` / text bytes | | ${writeCall(r, 'js_task')} vs ${writeCall(r, 'js_task_edit')} | |`,
    '',
    '## Goals',
    '',
    '| goal | measured | limit | result |',
    '|---|---|---|---|',
    ...r.goals.map(
      (g) => `| ${g.target} | ${n(g.measured)} | ≤ ${n(g.limit)} | ${g.pass ? 'pass' : 'MISS'} |`,
    ),
    '',
    '## Scenarios',
    '',
    '| scenario | calls | request | wire | structuredContent | text |',
    '|---|---|---|---|---|---|',
    ...Object.entries({ ...s, all: r.total }).map(
      ([k, t]) =>
        `| ${k} | ${t.calls} | ${n(t.request_bytes)} | ${n(t.wire_bytes)} | ${n(t.structured_bytes)} | ${n(t.text_bytes)} |`,
    ),
    '',
    '## Per tool (all scenarios)',
    '',
    '| tool | calls | request | wire | structuredContent | text | catalog entry | description | input schema | output schema |',
    '|---|---|---|---|---|---|---|---|---|---|',
    ...Object.entries(c.per_tool).map(([name, t]) => {
      const u = r.per_tool[name];
      const calls = u
        ? `${u.calls} | ${n(u.request_bytes)} | ${n(u.wire_bytes)} | ${n(u.structured_bytes)} | ${n(u.text_bytes)}`
        : '0 | | | |';
      return `| ${name} | ${calls} | ${n(t.total)} | ${n(t.description)} | ${n(t.input_schema)} | ${n(t.output_schema)} |`;
    }),
    '',
    '## Per call',
    '',
    '| scenario | # | tool | error | request | wire | structuredContent | text |',
    '|---|---|---|---|---|---|---|---|',
    ...r.calls.map(
      (x) =>
        `| ${x.scenario} | ${x.step} | ${x.tool} | ${x.is_error ? 'yes' : ''} | ${n(x.request_bytes)} | ${n(x.wire_bytes)} | ${n(x.structured_bytes)} | ${n(x.text_bytes)} |`,
    ),
    '',
  ];
  return lines.join('\n');
}

export function writeDogfood({ catalog, calls }) {
  const scenarios = groupBy(calls, 'scenario');
  const r = {
    title: 'Dogfood benchmark',
    environment: { node: process.version, date: new Date().toISOString() },
    reference: REFERENCE,
    goals: goals(catalog, scenarios, calls),
    catalog,
    scenarios,
    total: totals(calls),
    per_tool: groupBy(calls, 'tool'),
    calls,
  };
  mkdirSync(RESULTS, { recursive: true });
  writeFileSync(path.join(RESULTS, 'dogfood.json'), JSON.stringify(r, null, 2) + '\n');
  const md = markdown(r);
  writeFileSync(path.join(RESULTS, 'dogfood.md'), md);
  process.stdout.write(md);
  return r;
}
