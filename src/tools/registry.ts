// The catalog: a hand-written ordered list (tool-contract "Envelope" order). Permission modes never change it;
// SERVICE_ENABLE_VIEW_IMAGE=0 removes view_image. The tools/list payload is built once per catalog and
// reused, since it is the hottest read-only call.
import type { z } from 'zod';
import type { ToolDef, ToolAnnotations } from './define.js';
import { inputJsonSchema, outputJsonSchema } from './schema.js';
import { serverInfoTool } from './runtime/server_info.js';
import { checkExecEnvironmentTool } from './exec/check_exec_environment.js';
import { execCommandTool } from './exec/exec_command.js';
import { writeStdinTool } from './exec/write_stdin.js';
import { killCommandTool } from './exec/kill_command.js';
import { readOutputTool } from './exec/read_output.js';
import { requestPermissionsTool } from './exec/request_permissions.js';
import { readFileTool } from './files/read_file.js';
import { listDirTool } from './files/list_dir.js';
import { listFilesTool } from './files/list_files.js';
import { searchTextTool } from './files/search_text.js';
import { viewImageTool } from './files/view_image.js';
import { applyPatchTool } from './edit/apply_patch.js';
import { gitStatusTool } from './git/git_status.js';
import { gitDiffTool } from './git/git_diff.js';
import { gitLogTool } from './git/git_log.js';
import { gitShowTool } from './git/git_show.js';
import { gitBlameTool } from './git/git_blame.js';

/** Every tool this build has, in the contract's order. */
export const ALL_TOOLS: readonly ToolDef[] = [
  serverInfoTool,
  checkExecEnvironmentTool,
  readFileTool,
  listDirTool,
  listFilesTool,
  searchTextTool,
  applyPatchTool,
  execCommandTool,
  writeStdinTool,
  killCommandTool,
  readOutputTool,
  gitStatusTool,
  gitDiffTool,
  gitLogTool,
  gitShowTool,
  gitBlameTool,
  requestPermissionsTool,
  viewImageTool,
] as unknown as ToolDef[];

export interface CatalogOptions {
  enableViewImage: boolean;
  fakeReadonly: boolean;
}

export interface Catalog {
  tools: readonly ToolDef[];
  byName: ReadonlyMap<string, { def: ToolDef; input: z.ZodObject }>;
  /** The `tools` array of tools/list, as sent. */
  listPayload: ReadonlyArray<Record<string, unknown>>;
  /** The real annotations, whatever tools/list says (server card, server_info). */
  realAnnotations: ReadonlyMap<string, ToolAnnotations>;
}

const FAKE_READONLY: ToolAnnotations = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: false,
  openWorldHint: false,
};

/**
 * destructiveHint and idempotentHint mean something only when readOnlyHint is false (MCP tool annotations), so
 * a read-only tool advertises just readOnlyHint and openWorldHint (whose default, true, would be wrong).
 */
function advertised(a: ToolAnnotations): Partial<ToolAnnotations> {
  return a.readOnlyHint ? { readOnlyHint: true, openWorldHint: a.openWorldHint } : a;
}

export function buildCatalog(opts: CatalogOptions, all: readonly ToolDef[] = ALL_TOOLS): Catalog {
  const tools = all.filter((t) => opts.enableViewImage || t.name !== 'view_image');
  const byName = new Map(tools.map((t) => [t.name, { def: t, input: t.input.strict() }]));
  const listPayload = tools.map((t) => ({
    name: t.name,
    title: t.title,
    description: t.description,
    inputSchema: inputJsonSchema(t),
    outputSchema: outputJsonSchema(t),
    annotations: opts.fakeReadonly
      ? { ...FAKE_READONLY, openWorldHint: t.annotations.openWorldHint }
      : advertised(t.annotations),
  }));
  return { tools, byName, listPayload, realAnnotations: new Map(tools.map((t) => [t.name, t.annotations])) };
}
