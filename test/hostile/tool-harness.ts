// The harness shared by the tool-argument files of the hostile-input suite: one server per
// file on a workspace with a sibling canary directory and the audit log on, the catalog from tools/list, each
// tool's outputSchema compiled as the v1 SDK client compiles it, and `checkedCall`: one tools/call whose answer
// must be a result or a tool error with a code that fits the tool, valid against the outputSchema, with no
// error in the server's log and nothing changed in the workspace or the canary directory.
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { appendFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import type { Json } from './arbitraries.js';
import {
  callRaw,
  judge,
  makeLayout,
  postRaw,
  printTallies,
  snapshot,
  startHostile,
  type HostileServer,
  type Layout,
} from './support.js';
import { treeChanges } from '../helpers/tree-snapshot.js';

export type Tool = { name: string; inputSchema: Json; outputSchema: Json };
type Check = (v: unknown) => { valid: boolean; errorMessage?: string };

const FILE = [
  'INVALID_ARGUMENT',
  'NOT_FOUND',
  'PATH_OUTSIDE_WORKSPACE',
  'SYMLINK_ESCAPE',
  'IS_DIRECTORY',
  'NOT_A_DIRECTORY',
];
/**
 * The codes each tool may answer (docs/tools.md#the-tools, docs/tools.md#editing-files, #commands, #git;
 * README "Editing files").
 */
export const ALLOWED: Record<string, string[]> = {
  server_info: ['INVALID_ARGUMENT'],
  check_exec_environment: ['INVALID_ARGUMENT'],
  read_file: [...FILE, 'BINARY_FILE', 'UNSUPPORTED_ENCODING'],
  list_dir: FILE,
  list_files: FILE,
  search_text: FILE,
  view_image: [...FILE, 'UNSUPPORTED_ENCODING', 'OUTPUT_TOO_LARGE'],
  apply_patch: [
    'INVALID_ARGUMENT',
    'PATH_OUTSIDE_WORKSPACE',
    'SYMLINK_ESCAPE',
    'PATCH_FAILED',
    'PATCH_CONTEXT_NOT_FOUND',
    'PATCH_CONTEXT_AMBIGUOUS',
    'PATCH_HUNKS_OVERLAP',
    'PATCH_ALREADY_APPLIED',
  ],
  edit_file: [
    ...FILE,
    'PATCH_FAILED',
    'EDIT_NOT_FOUND',
    'EDIT_AMBIGUOUS',
    'BINARY_FILE',
    'UNSUPPORTED_ENCODING',
  ],
  exec_command: [...FILE, 'PERMISSION_REQUIRED'],
  write_stdin: ['INVALID_ARGUMENT', 'COMMAND_NOT_FOUND'],
  kill_command: ['INVALID_ARGUMENT', 'COMMAND_NOT_FOUND'],
  read_output: ['INVALID_ARGUMENT', 'COMMAND_NOT_FOUND'],
  git_status: [...FILE, 'GIT_ERROR'],
  git_diff: [...FILE, 'GIT_ERROR'],
  git_log: [...FILE, 'GIT_ERROR'],
  git_show: [...FILE, 'GIT_ERROR'],
  git_blame: [...FILE, 'GIT_ERROR', 'BINARY_FILE'],
  show_changes: ['INVALID_ARGUMENT', 'REVIEW_POINT_UNKNOWN', 'REVIEW_TOO_LARGE', 'GIT_ERROR'],
  request_permissions: ['INVALID_ARGUMENT', 'ELICITATION_UNSUPPORTED'],
};
/**
 * Tools that never get generated strings (they could run them, or edit_file write them: an empty old_string
 * creates a file, and the workspace must not change): only violations and fixed values.
 */
export const NO_GENERATED_STRINGS = new Set(['exec_command', 'write_stdin', 'edit_file']);
/** Fixed, harmless values for required arguments, used when another argument carries the fault. */
export const SAFE_REQUIRED: Record<string, unknown> = {
  cmd: 'true',
  command_id: 'no-such-command',
  path: 'src/main.ts',
  query: 'main',
  patch: '*** Begin Patch\n*** End Patch\n',
  old_string: 'text that is in no file',
  new_string: 'x',
  tool_name: 'exec_command',
  permission: 'network',
  reason: 'hostile-input test',
  output_ref: 'command:no-such-command:stdout',
};

export interface ToolHarness {
  readonly L: Layout;
  readonly srv: HostileServer;
  readonly tools: Tool[];
  tool(name: string): Tool;
  ctx(): { ws: string; canary: string };
  checkedCall(
    name: string,
    args: unknown,
    allowed?: string[],
  ): Promise<{ v: ReturnType<typeof judge>; r: Awaited<ReturnType<typeof callRaw>> }>;
}

/** Registers the file's beforeAll/afterAll and returns the harness (usable inside tests). */
export function toolHarness(): ToolHarness {
  let L: Layout;
  let srv: HostileServer;
  let tools: Tool[] = [];
  const checks = new Map<string, Check>();
  beforeAll(async () => {
    L = makeLayout();
    srv = await startHostile({
      workspace: L.ws,
      // The audit log records every call's arguments: hostile arguments must not break it (outside the workspace).
      env: { SERVICE_AUDIT_LOG: path.join(L.parent, 'audit.jsonl') },
    });
    const r = await postRaw(srv.url, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }));
    tools = r.json.result.tools;
    const ajv = new AjvJsonSchemaValidator();
    for (const t of tools) checks.set(t.name, ajv.getValidator(t.outputSchema as never) as Check);
  });
  const slowest: Array<{ ms: number; label: string }> = [];
  afterAll(async () => {
    printTallies();
    console.log(
      `[hostile] slowest calls: ${slowest.map((x) => `${Math.round(x.ms)} ms ${x.label}`).join(' | ')}`,
    );
    await srv?.close();
    L?.cleanup();
  });

  async function checkedCall(name: string, args: unknown, allowed = ALLOWED[name] ?? []) {
    const before = { ws: snapshot(L.ws), canary: snapshot(L.canary) };
    const label = `${name} ${JSON.stringify(args)?.slice(0, 400)}`;
    srv.takeErrors();
    // HOSTILE_TRACE=<file>: each call is appended before it is sent, so a hang names its input.
    if (process.env.HOSTILE_TRACE)
      appendFileSync(process.env.HOSTILE_TRACE, `${JSON.stringify({ name, args })}\n`);
    const t0 = performance.now();
    const r = await callRaw(srv.url, name, args);
    const ms = performance.now() - t0;
    if (ms > (slowest[0]?.ms ?? 0)) slowest.unshift({ ms, label: label.slice(0, 160) });
    slowest.splice(3);
    expect(srv.takeErrors(), `${label}: the server logged an error`).toEqual([]);
    const v = judge(r, label);
    // A body over SERVICE_MAX_REQUEST_BYTES (huge generated strings) is refused whole: 413/-32600, specific too.
    if (v.kind === 'rpc' && v.code === -32600 && r.status === 413) return { v, r };
    expect(v.kind === 'ok' || v.kind === 'tool', `${label}: ${r.text.slice(0, 300)}`).toBe(true);
    if (v.kind === 'tool') expect(allowed, `${label}: ${r.text.slice(0, 300)}`).toContain(v.code);
    const verdict = checks.get(name)?.(r.json.result.structuredContent);
    expect(verdict?.valid, `${label}: result does not match the outputSchema: ${verdict?.errorMessage}`).toBe(
      true,
    );
    expect(treeChanges(before.canary, snapshot(L.canary)), `${label}: canary files changed`).toEqual([]);
    expect(treeChanges(before.ws, snapshot(L.ws)), `${label}: the workspace changed`).toEqual([]);
    return { v, r };
  }

  return {
    get L() {
      return L;
    },
    get srv() {
      return srv;
    },
    get tools() {
      return tools;
    },
    tool(name: string) {
      const t = tools.find((x) => x.name === name);
      if (!t) throw new Error(`tools/list has no ${name}`);
      return t;
    },
    ctx: () => ({ ws: L.ws, canary: L.canary }),
    checkedCall,
  };
}
