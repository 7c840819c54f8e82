// revert_changes (docs/tools.md#review-points): the review card's "Revert to this review point", visible to the
// app only (`_meta.ui.visibility`; tools/registry.ts APP_TOOLS, never in the model's catalog). Every file that
// differs between the point and now gets its content at the point back (added files removed, deleted ones
// restored, renames undone) in one atomic commit through the patch engine (patch/restore.ts), kept in the
// console's edit journal and audited as any call. PATCH_CONFLICT, nothing written, when one of those files
// changed after the last review point: that work was never reviewed and would be lost.
import * as z from 'zod';
import { recordBeforeWrite } from '../../git/baseline.js';
import { restoreFiles } from '../../patch/restore.js';
import { journalFor } from '../common.js';
import { defineTool } from '../define.js';
import { lean } from '../result.js';

const input = z.object({ point: z.string().min(1).max(64) });

const output = z.object({
  point: z.string(),
  affected_files: z
    .array(z.object({ path: z.string(), operation: z.enum(['add', 'update', 'delete', 'move']) }))
    .optional(),
});

export const revertChangesTool = defineTool({
  name: 'revert_changes',
  title: 'Revert to review point',
  description: 'Restore every file to its content at a review point (the review card).',
  uses: ['reviews', 'root', 'patchLocks', 'log', 'baseline', 'edits'],
  input,
  output,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  scope: 'workspace',
  async handler(args, ctx) {
    const rt = ctx.runtime;
    const plan = await rt.reviews.revertPlan(args.point);
    const done = await restoreFiles(
      {
        root: rt.root,
        locks: rt.patchLocks,
        log: rt.log,
        beforeWrite: (files) => files.forEach((f) => recordBeforeWrite(rt, f)),
        committed: journalFor(ctx, 'revert_changes'),
      },
      plan.files,
      'revert_changes',
    );
    const n = done.affected.length;
    return {
      structured: lean({ point: args.point, affected_files: done.affected }, ['point', 'path', 'operation']),
      text: n
        ? `Restored ${n} file(s) to review point ${args.point}.`
        : `Nothing differs from ${args.point}.`,
    };
  },
});

/** The tool's `_meta`: called by the app only (the MCP Apps extension's tool visibility). */
export const REVERT_CHANGES_META = { ui: { visibility: ['app'] } } as const;
