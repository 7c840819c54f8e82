// edit_file (docs/tools.md#editing-files): replaces old_string with new_string in one file, or creates a file
// when old_string is empty. Validates arguments, runs patch/edit through the runtime's workspace and per-file
// locks (the engine apply_patch writes with), and answers with apply_patch's result shape and one short line
// of text.
import * as z from 'zod';
import { recordBeforeWrite } from '../../git/baseline.js';
import { journalFor } from '../common.js';
import { editFile } from '../../patch/edit.js';
import { defineTool } from '../define.js';
import { editDiffMeta, keepSteps } from './edit-diff.js';
import { lean } from '../result.js';

const DESCRIPTION =
  'Replace old_string (exact, once unless replace_all) with new_string. Empty old_string creates a new file.';

const input = z.object({
  path: z.string().min(1),
  old_string: z.string(),
  new_string: z.string(),
  replace_all: z.boolean().optional(),
});

/** apply_patch's result shape: the file (operation add or update) and the line totals. */
const output = z.object({
  affected_files: z.array(
    z.object({
      path: z.string(),
      operation: z.enum(['add', 'update']),
    }),
  ),
  additions: z.number().int().optional(),
  removals: z.number().int().optional(),
});

export const editFileTool = defineTool({
  name: 'edit_file',
  title: 'Edit file',
  description: DESCRIPTION,
  uses: ['root', 'patchLocks', 'log', 'baseline', 'edits'],
  input,
  output,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  scope: 'workspace',
  async handler(args, ctx) {
    const rt = ctx.runtime;
    // git/baseline keeps each file's original (first change only) so git_diff works outside a repository.
    const beforeWrite = (files: string[]) => files.forEach((f) => recordBeforeWrite(rt, f));
    const steps = keepSteps(journalFor(ctx, 'edit_file'), ctx.ui);
    const o = await editFile(
      {
        root: rt.root,
        locks: rt.patchLocks,
        log: rt.log,
        beforeWrite,
        committed: steps.committed,
      },
      {
        path: args.path,
        oldString: args.old_string,
        newString: args.new_string,
        replaceAll: args.replace_all === true,
      },
    );
    const file = o.affected[0]?.path ?? args.path;
    const totals = o.replacements === 0 ? `+${o.additions}` : `+${o.additions} -${o.removals}`;
    const text =
      o.replacements === 0
        ? `Created ${file} (${totals}).`
        : o.replacements === 1
          ? `Edited ${file} (${totals}).`
          : `Edited ${file}: ${o.replacements} replacements (${totals}).`;
    const meta = editDiffMeta(o.affected, steps.kept);
    return {
      ...(meta ? { meta } : {}),
      structured: lean({ affected_files: o.affected, additions: o.additions, removals: o.removals }, [
        'affected_files',
        'path',
      ]),
      text,
    };
  },
});
