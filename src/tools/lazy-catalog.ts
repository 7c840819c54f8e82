// Where the runtime's catalog comes from. The bundled bin (scripts/bundle.mjs) carries the tool summaries
// made at build time, so it answers initialize and tools/list without loading zod and the tool modules; they
// load on the first tools/call, or earlier when the server warms up after start (docs/architecture.md).
// Unbundled (tests, tsc's output) the summaries are computed from the tools themselves, loaded here with this
// module.
//
// With the tool modules comes everything else the server would load on first use (the search engines, the PTY
// library, prom-client: `alsoLoad`, from the composition root), and a tool call runs only once all of it is
// loaded. So no code is loaded after a command may have run: the server may be installed inside the workspace
// it serves (a devDependency), where a command can rewrite its files (docs/security-model.md, rule B).
import { catalogOf, type Catalog, type CatalogOptions, type ToolSummary } from './catalog.js';

/** toolSummaries() of every tool, as the build computed them; defined only in the bundled bin. */
declare const __WORKBENCH_TOOL_SUMMARIES__: readonly ToolSummary[] | undefined;
/** toolSummaries(APP_TOOLS), the app-only tools (tools/apps.ts), likewise. */
declare const __WORKBENCH_APP_TOOL_SUMMARIES__: readonly ToolSummary[] | undefined;
const BUILT = typeof __WORKBENCH_TOOL_SUMMARIES__ === 'undefined' ? undefined : __WORKBENCH_TOOL_SUMMARIES__;
const BUILT_APP =
  typeof __WORKBENCH_APP_TOOL_SUMMARIES__ === 'undefined' ? [] : __WORKBENCH_APP_TOOL_SUMMARIES__;
const eager = BUILT ? undefined : await import('./registry.js');

export function catalogFor(opts: CatalogOptions): Catalog {
  if (eager) return eager.buildCatalog(opts);
  return catalogOf(
    BUILT as readonly ToolSummary[],
    opts,
    async () => {
      const [registry] = await Promise.all([import('./registry.js'), opts.alsoLoad?.()]);
      return registry.toolEntries();
    },
    BUILT_APP,
  );
}
