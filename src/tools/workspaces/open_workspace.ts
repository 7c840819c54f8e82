// open_workspace (docs/tools.md#several-workspaces): opens a directory strictly inside a project root as a
// workspace — the directory itself (`checkout`), or a new branch of its repository checked out in a directory
// the server owns (`worktree`) — and answers the id every workspace tool then takes as `workspace`. Listed only
// when project roots are configured; the registry is src/workspaces/.
import * as z from 'zod';
import { ToolError } from '../../core/tool-error.js';
import { defineTool } from '../define.js';
import { lean } from '../result.js';

const input = z.object({
  path: z.string().min(1).max(4096).describe('Absolute, ~/…, or relative to a project root.'),
  mode: z.enum(['checkout', 'worktree']).default('checkout'),
  base_ref: z.string().min(1).max(256).optional().describe('worktree: the branch start (default HEAD).'),
});

const output = z.object({
  workspace: z.string(),
  path: z.string(),
  mode: z.enum(['checkout', 'worktree']),
  branch: z.string().optional(),
  base: z.string().optional(),
  source: z.string().optional(),
  note: z.string().optional(),
  instructions: z.string().optional(),
});

export const openWorkspaceTool = defineTool({
  name: 'open_workspace',
  title: 'Open a workspace',
  description:
    'Open a project directory under a project root; pass the id it returns as `workspace` to the other tools ' +
    '(without it they act on the default workspace). mode "worktree": a new branch in its own directory, for a ' +
    'parallel task.',
  uses: ['workspaces'],
  input,
  output,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  async handler(args, ctx) {
    const desk = ctx.runtime.workspaces;
    if (!desk) throw new ToolError('INVALID_ARGUMENT', 'this server has no project roots', {}, {});
    const req = { path: args.path, mode: args.mode, ...(args.base_ref ? { base_ref: args.base_ref } : {}) };
    const { view, note, instructions } = await desk.open(req, ctx.signal);
    const { branch, base, source } = view;
    const structured = {
      workspace: view.id,
      path: view.path,
      mode: view.mode,
      ...lean({ branch, base, source, note, instructions }),
    };
    const lines = [
      `Opened workspace ${view.id}: ${view.path} (${view.mode}${view.branch ? `, branch ${view.branch} from ${view.base}` : ''}).`,
      `Pass "workspace": "${view.id}" to the file, edit, command and git tools.`,
      note ? `Note: ${note}.` : '',
      instructions ? `Project instructions:\n${instructions}` : '',
    ].filter(Boolean);
    return { structured, text: lines.join('\n') };
  },
});
