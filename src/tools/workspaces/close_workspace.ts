// close_workspace (docs/tools.md#several-workspaces): ends a workspace's commands and forgets it; `remove`
// also deletes a worktree's directory and branch, only when it holds no uncommitted and no unmerged work,
// unless the operator approves on the console (docs/console.md#approvals). The default workspace has no id and
// cannot be closed.
import * as z from 'zod';
import { ToolError } from '../../core/tool-error.js';
import { defineTool } from '../define.js';
import { liftByOperator } from '../exec/operator-approval.js';
import { lean } from '../result.js';

const input = z.object({
  workspace: z.string().min(1).max(64),
  remove: z.boolean().default(false),
});

const output = z.object({ workspace: z.string(), removed: z.boolean().optional() });

/** How long a removal waits for the operator's decision before APPROVAL_PENDING. */
const APPROVAL_WAIT_MS = 10_000;

export const closeWorkspaceTool = defineTool({
  name: 'close_workspace',
  title: 'Close a workspace',
  description:
    "End a workspace's commands and forget its id. remove: also delete a worktree (refused while it holds " +
    'uncommitted or unmerged work, unless the operator approves).',
  uses: ['workspaces', 'approvals'],
  input,
  output,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  async handler(args, ctx) {
    const desk = ctx.runtime.workspaces;
    if (!desk) throw new ToolError('INVALID_ARGUMENT', 'this server has no project roots', {}, {});
    desk.servicesFor(args.workspace); // WORKSPACE_NOT_FOUND before anything else
    const isWorktree = desk.list().some((w) => w.id === args.workspace && w.mode === 'worktree');
    const remove = args.remove && isWorktree;
    if (remove) {
      const pending = await desk.pendingWork(args.workspace, ctx.signal);
      if (pending) await approveRemoval(ctx, args.workspace, pending);
    }
    const view = await desk.close(args.workspace, remove);
    const structured = { workspace: view.id, ...lean({ removed: remove }) };
    const text = remove
      ? `Closed workspace ${view.id} and removed ${view.path}${view.branch ? ` with branch ${view.branch}` : ''}.`
      : `Closed workspace ${view.id}; ${view.path} is left as it was.`;
    return { structured, text };
  },
});

async function approveRemoval(ctx: Parameters<typeof liftByOperator>[0], id: string, pending: string) {
  const args = { workspace: id, remove: true };
  const why = `workspace ${id} holds work not in its base (${pending})`;
  const lifted = await liftByOperator(ctx, {
    tool: 'close_workspace',
    args,
    kind: 'command',
    subject: `close_workspace ${JSON.stringify(args)}`,
    why,
    waitMs: APPROVAL_WAIT_MS,
  });
  if (!lifted)
    throw new ToolError(
      'WORKSPACE_UNMERGED',
      `${why}; it was not removed`,
      { workspace: id },
      {
        suggestion:
          'Ask the operator to merge or discard it in the console, or close it without remove (the worktree is kept).',
      },
    );
}
