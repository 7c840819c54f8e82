// The tools: a hand-written ordered list (docs/tools.md#the-tools), their summaries (the tools/list data,
// advertised schemas generated from the zod schemas that validate) and their entries for tools/call. The
// catalog itself is tools/catalog.ts; the bundled bin gets the summaries from the build (scripts/bundle.mjs)
// and loads this module on first use (tools/lazy-catalog.ts).
import { catalogOf, type Catalog, type CatalogOptions, type ToolEntry, type ToolSummary } from './catalog.js';
import type { AnyToolDef, ServiceName, Services, ToolDef, ToolServices } from './define.js';
import type * as z from 'zod';
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
import { showChangesTool } from './changes/show_changes.js';
import { REVERT_CHANGES_META, revertChangesTool } from './changes/revert_changes.js';
import { openWorkspaceTool } from './workspaces/open_workspace.js';
import { closeWorkspaceTool } from './workspaces/close_workspace.js';

/**
 * A tool with its argument and result types hidden (define.ts): the check of the raw arguments and the handler
 * are joined here, where both know the tool's types, so the list below may mix tools of every shape. The
 * handler's `ctx.runtime` is built from the server's services once per server, with the keys the tool
 * declared in `uses` and no other (servicesFor).
 */
export function erase<S extends z.core.$ZodShape, O extends z.ZodObject, U extends ServiceName>(
  def: ToolDef<z.ZodObject<S>, O, U>,
): AnyToolDef {
  let strict: z.ZodObject<S, z.core.$strict> | undefined;
  const made = new WeakMap<ToolServices, Services<U>>();
  const narrow = (all: ToolServices): Services<U> => {
    let s = made.get(all);
    if (!s) made.set(all, (s = servicesFor(all, def.uses)));
    return s;
  };
  return {
    name: def.name,
    title: def.title,
    description: def.description,
    input: def.input,
    output: def.output,
    annotations: def.annotations,
    ...(def.meta ? { meta: def.meta } : {}),
    ...(def.scope ? { scope: def.scope } : {}),
    uses: def.uses,
    call: async (raw, ctx) =>
      def.handler(parseArgs(def.name, (strict ??= def.input.strict()), raw), {
        ...ctx,
        runtime: narrow(ctx.runtime),
      }),
  };
}

/**
 * A new frozen object with the members `uses` names and no other: values copied, methods bound to `all`. Built
 * once per server and tool, so a tool sees the same object on every call (git/repo.ts caches by the workspace
 * root it holds).
 */
export function servicesFor<U extends ServiceName>(all: ToolServices, uses: readonly U[]): Services<U> {
  const picked: Partial<Record<U, unknown>> = {};
  for (const name of uses) {
    const v: unknown = all[name];
    picked[name] = typeof v === 'function' ? v.bind(all) : v;
  }
  return Object.freeze(picked) as Services<U>;
}

/** Every tool this build has, in the contract's order. */
export const ALL_TOOLS: readonly AnyToolDef[] = [
  erase(serverInfoTool),
  erase(checkExecEnvironmentTool),
  erase(readFileTool),
  erase(listDirTool),
  erase(listFilesTool),
  erase(searchTextTool),
  erase(applyPatchTool),
  erase(editFileTool),
  erase(execCommandTool),
  erase(writeStdinTool),
  erase(killCommandTool),
  erase(readOutputTool),
  erase(gitStatusTool),
  erase(gitDiffTool),
  erase(gitLogTool),
  erase(gitShowTool),
  erase(gitBlameTool),
  erase(showChangesTool),
  erase(requestPermissionsTool),
  erase(viewImageTool),
  // Listed only when project roots are configured (tools/catalog.ts WORKSPACE_TOOLS).
  erase(openWorkspaceTool),
  erase(closeWorkspaceTool),
];

/**
 * The app-only tools (docs/review-card.md#who-sees-it): listed and callable only for a client that declared the
 * UI extension, for the card to call through the host; never in ALL_TOOLS, so the model's catalog does not grow.
 */
export const APP_TOOLS: readonly AnyToolDef[] = [erase({ ...revertChangesTool, meta: REVERT_CHANGES_META })];

/** Each tool as tools/list describes it; computed once per catalog (tools/list is the hottest read-only call). */
export function toolSummaries(all: readonly AnyToolDef[] = ALL_TOOLS): ToolSummary[] {
  return all.map((t) => ({
    name: t.name,
    title: t.title,
    description: t.description,
    inputSchema: inputJsonSchema(t),
    outputSchema: outputJsonSchema(t),
    annotations: t.annotations,
    ...(t.meta ? { _meta: t.meta } : {}),
    ...(t.scope ? { scope: t.scope } : {}),
  }));
}

/** What tools/call needs of each tool (the app-only ones included), by name. */
export function toolEntries(
  all: readonly AnyToolDef[] = ALL_TOOLS,
  app: readonly AnyToolDef[] = APP_TOOLS,
): Map<string, ToolEntry> {
  return new Map([...all, ...app].map((t) => [t.name, t]));
}

/** A catalog with every definition loaded (tests, and the server when it runs unbundled). */
export function buildCatalog(
  opts: CatalogOptions,
  all: readonly AnyToolDef[] = ALL_TOOLS,
  app: readonly AnyToolDef[] = APP_TOOLS,
): Catalog {
  const entries = toolEntries(all, app);
  return catalogOf(toolSummaries(all), opts, () => Promise.resolve(entries), toolSummaries(app));
}
