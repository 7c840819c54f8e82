// The tools: a hand-written ordered list (docs/tools.md#the-tools), their summaries (the tools/list data,
// advertised schemas generated from the zod schemas that validate) and their entries for tools/call. The
// catalog itself is tools/catalog.ts; the bundled bin gets the summaries from the build (scripts/bundle.mjs)
// and loads this module on first use (tools/lazy-catalog.ts).
import { catalogOf, type Catalog, type CatalogOptions, type ToolEntry, type ToolSummary } from './catalog.js';
import type { ToolDef } from './define.js';
import { inputJsonSchema, outputJsonSchema, parseArgs } from './schema.js';
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
import { editFileTool } from './edit/edit_file.js';
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
  editFileTool,
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

/** Each tool as tools/list describes it; computed once per catalog (tools/list is the hottest read-only call). */
export function toolSummaries(all: readonly ToolDef[] = ALL_TOOLS): ToolSummary[] {
  return all.map((t) => ({
    name: t.name,
    title: t.title,
    description: t.description,
    inputSchema: inputJsonSchema(t),
    outputSchema: outputJsonSchema(t),
    annotations: t.annotations,
  }));
}

/** What tools/call needs of each tool: the definition and a check of the arguments against the strict input. */
export function toolEntries(all: readonly ToolDef[] = ALL_TOOLS): Map<string, ToolEntry> {
  return new Map(
    all.map((t) => {
      const input = t.input.strict();
      return [t.name, { def: t, parse: (raw: unknown) => parseArgs(t.name, input, raw) }];
    }),
  );
}

/** A catalog with every definition loaded (tests, and the server when it runs unbundled). */
export function buildCatalog(opts: CatalogOptions, all: readonly ToolDef[] = ALL_TOOLS): Catalog {
  const entries = toolEntries(all);
  return catalogOf(toolSummaries(all), opts, () => Promise.resolve(entries));
}
