// server_info: what this server is and how it is configured — versions, workspace, modes, limits, the project
// instruction files and the real annotation state (docs/design-notes.md#fake-read-only-annotations:
// annotation_override).
import * as z from 'zod';
import { SERVER_NAME, SERVER_TITLE, SERVER_VERSION } from '../../core/version.js';
import { SUPPORTED_VERSIONS } from '../../core/versions.js';
import { defineTool, READ_ONLY, type WorkspaceDesk } from '../define.js';
import { MAX_BYTES_LIMIT, MAX_LINES_PER_CALL } from '../files/read_file.js';

const input = z.object({});
const output = z.object({
  name: z.string(),
  title: z.string(),
  version: z.string(),
  protocol_versions: z.array(z.string()),
  workspace: z.string(),
  permission_mode: z.enum(['safe', 'trusted', 'dangerous']),
  sandbox: z.object({
    requested: z.string(),
    in_use: z.string().optional(),
    reason: z.string(),
    network_unavailable: z.string().optional(),
  }),
  /** Where git and ripgrep run (process/jail/jail.ts). */
  git_search_sandbox: z.object({ in_use: z.string().optional(), reason: z.string() }),
  process_limit: z.object({ max_processes: z.number(), enforced_by: z.string(), reason: z.string() }),
  auth_mode: z.string(),
  annotation_override: z.enum(['fake_readonly']).nullable(),
  limits: z.record(z.string(), z.number()),
  project_context_files: z.array(z.string()),
  search_engine: z.string(),
  tool_count: z.number(),
  tools: z.array(z.string()),
});

export const serverInfoTool = defineTool({
  name: 'server_info',
  title: 'Server info',
  description:
    'This server: version, protocols, workspace, permission mode, sandbox, auth, limits, instruction files, tools.',
  uses: [
    'config',
    'root',
    'catalog',
    'search',
    'sandboxStatus',
    'jail',
    'commands',
    'instructions',
    'workspaces',
  ],
  input,
  output,
  annotations: READ_ONLY,
  handler(_args, ctx) {
    const { config, root, catalog } = ctx.runtime;
    const engine = ctx.runtime.search.engine();
    const sandbox = ctx.runtime.sandboxStatus();
    const jail = ctx.runtime.jail.status();
    const processLimit = ctx.runtime.commands.processLimit().status;
    const noDefault = config.noDefaultWorkspace === true;
    const structured = {
      name: SERVER_NAME,
      title: SERVER_TITLE,
      version: SERVER_VERSION,
      protocol_versions: [...SUPPORTED_VERSIONS],
      workspace: root.lexical,
      permission_mode: config.permissionMode,
      sandbox: {
        requested: sandbox.requested,
        in_use: sandbox.in_use ?? undefined,
        reason: sandbox.reason,
        network_unavailable: sandbox.network_unavailable,
      },
      git_search_sandbox: { in_use: jail.in_use ?? undefined, reason: jail.reason },
      process_limit: processLimit,
      auth_mode: config.stdio ? 'stdio' : config.authMode,
      annotation_override: config.dangerouslyFakeReadonlyAnnotations ? ('fake_readonly' as const) : null,
      limits: {
        max_request_bytes: config.maxRequestBytes,
        read_file_max_lines: MAX_LINES_PER_CALL,
        read_file_max_bytes: MAX_BYTES_LIMIT,
        exec_max_active: config.execMaxActive,
        exec_max_processes: config.execMaxProcesses,
        exec_max_retained: config.execMaxRetained,
        exec_retention_s: config.execRetentionS,
        exec_stream_buffer_bytes: config.execStreamBufferBytes,
        exec_total_buffer_bytes: config.execTotalBufferBytes,
      },
      project_context_files: ctx.runtime.instructions.files(),
      search_engine: engine.kind === 'ripgrep' ? `ripgrep (${engine.source})` : 'js',
      tool_count: catalog.names.length,
      tools: [...catalog.names],
      // Only with project roots (docs/tools.md#several-workspaces); tools/list advertises it then alone.
      ...workspacesOf(ctx.runtime.workspaces, noDefault),
    };
    const desk = ctx.runtime.workspaces;
    const text = [
      ...summary(structured, config, sandbox, jail, processLimit),
      workspacesLine(desk, noDefault),
    ].filter(Boolean);
    return { structured, text: lines(text) };
  },
});

const lines = (l: string[]) => l.join('\n');

/** The text lines of server_info (each warning on its own line). */
function summary(
  structured: {
    workspace: string;
    auth_mode: string;
    annotation_override: string | null;
    project_context_files: string[];
    search_engine: string;
    tool_count: number;
    tools: string[];
  },
  config: { permissionMode: string },
  sandbox: { in_use: string | null; reason: string; network_unavailable?: string | undefined },
  jail: { in_use: string | null; reason: string },
  processLimit: { max_processes: number; enforced_by: string },
): string[] {
  return [
    `${SERVER_NAME} ${SERVER_VERSION} serving ${structured.workspace}`,
    `protocols: ${SUPPORTED_VERSIONS.join(', ')}; auth: ${structured.auth_mode}; permission mode: ${config.permissionMode}`,
    `sandbox: ${sandbox.in_use ?? 'none'} (${sandbox.reason})`,
    jail.in_use ? '' : `WARNING: ${jail.reason}.`,
    sandbox.network_unavailable && config.permissionMode !== 'dangerous'
      ? `WARNING: commands have no network at all (fail closed): ${sandbox.network_unavailable}.`
      : '',
    `processes per command: at most ${processLimit.max_processes} (${processLimit.enforced_by})`,
    sandbox.in_use === null && config.permissionMode !== 'dangerous'
      ? `WARNING: no OS sandbox, so permission mode ${config.permissionMode} only filters command lines and cannot stop a script.`
      : '',
    structured.annotation_override
      ? 'WARNING: tools/list reports every tool as read-only (--dangerously-fake-readonly-annotations).'
      : '',
    `project instructions: ${structured.project_context_files.join(', ') || 'none'}; search: ${structured.search_engine}`,
    `tools (${structured.tool_count}): ${structured.tools.join(', ')}`,
  ].filter(Boolean);
}

/** The project roots and the open workspaces, when project roots are configured. */
function workspacesOf(desk: WorkspaceDesk | undefined, noDefault: boolean): Record<string, unknown> {
  if (!desk) return {};
  return {
    workspaces: {
      roots: [...desk.roots],
      open: desk.list(),
      ...(noDefault ? { no_default: true } : {}),
      ...(desk.kept ? {} : { kept: false }),
    },
  };
}

function workspacesLine(desk: WorkspaceDesk | undefined, noDefault: boolean): string {
  if (!desk) return '';
  const open = desk.list().map((w) => `${w.id} ${w.path} (${w.mode})`);
  return [
    `project roots: ${desk.roots.join(', ')}${noDefault ? ' (no default workspace: call open_workspace first)' : ''}`,
    `open workspaces: ${open.join('; ') || 'none'}${desk.kept ? '' : ' (kept in memory only: SERVICE_STATE_DIR is off or unusable)'}`,
  ].join('\n');
}
