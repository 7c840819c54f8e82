// apply_patch (docs/tools.md#editing-files): changes files from a patch (edit_file is the other writer).
// Validates arguments, runs the patch engine against the runtime's workspace and per-file locks, and writes
// the result for a model: one line of totals, the A/M/D/R summary (in the text only: affected_files says it
// in the structured result), and a note when fuzzy matching was needed.
import * as z from 'zod';
import { recordBeforeWrite } from '../../git/baseline.js';
import { journalFor } from '../common.js';
import { applyPatch, type PatchOutcome } from '../../patch/engine.js';
import { FUZZ_NAMES } from '../../patch/line-index.js';
import { defineTool } from '../define.js';
import { editDiffMeta, keepSteps } from './edit-diff.js';
import { lean } from '../result.js';

const EXAMPLE = [
  '*** Begin Patch',
  '*** Update File: src/greet.py',
  '@@ def greet(name):',
  '-    print("Hi " + name)',
  '+    print(f"Hello, {name}!")',
  '     return None',
  '*** Add File: docs/NOTES.md',
  '+# Notes',
  '*** Delete File: old/legacy.py',
  '*** End Patch',
].join('\n');

const DESCRIPTION =
  'Change files with a patch. Format:\n\n' +
  `${EXAMPLE}\n\n` +
  "Hunk lines: ' ' context (about 3 lines around each change), '-' removed, '+' added; '@@ LINE' names a line " +
  "above the change. Also '*** Move to: PATH' after '*** Update File', and '*** End of File'. A unified diff " +
  'works too. Each hunk must match one place; nothing is written unless all of it applies.';

const input = z.object({
  patch: z.string().min(1),
  dry_run: z.boolean().default(false),
});

/**
 * What changed: the files in patch order and the line totals (fuzz: the loosest matching tier any hunk
 * needed, 1 trailing whitespace, 2 surrounding whitespace, 3 Unicode dashes/quotes/spaces; absent when exact).
 */
const output = z.object({
  affected_files: z.array(
    z.object({
      path: z.string(),
      operation: z.enum(['add', 'update', 'delete', 'move']),
      old_path: z.string().optional(),
    }),
  ),
  additions: z.number().int().optional(),
  removals: z.number().int().optional(),
  fuzz: z.number().int().min(0).max(3).optional(),
  dry_run: z.boolean().optional(),
});

export const applyPatchTool = defineTool({
  name: 'apply_patch',
  title: 'Apply patch',
  description: DESCRIPTION,
  uses: ['root', 'patchLocks', 'log', 'baseline', 'edits'],
  input,
  output,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  scope: 'workspace',
  async handler(args, ctx) {
    const rt = ctx.runtime;
    // git/baseline keeps each file's original (first change only) so git_diff works outside a repository.
    const beforeWrite = (files: string[]) => files.forEach((f) => recordBeforeWrite(rt, f));
    const steps = keepSteps(journalFor(ctx, 'apply_patch'), ctx.ui);
    const outcome = await applyPatch(
      {
        root: rt.root,
        locks: rt.patchLocks,
        log: rt.log,
        beforeWrite,
        committed: steps.committed,
      },
      args.patch,
      {
        dryRun: args.dry_run,
      },
    );
    const structured = lean(
      {
        affected_files: outcome.affected,
        additions: outcome.additions,
        removals: outcome.removals,
        fuzz: outcome.fuzz,
        dry_run: outcome.dryRun,
      },
      ['affected_files', 'path'],
    );
    const meta = editDiffMeta(outcome.affected, steps.kept);
    return { structured, text: resultText(outcome, summaryLines(outcome)), ...(meta ? { meta } : {}) };
  },
});

function summaryLines(o: PatchOutcome): string {
  return o.affected
    .map((f) => {
      if (f.operation === 'move') return `R ${f.old_path} -> ${f.path}`;
      return `${f.operation === 'add' ? 'A' : f.operation === 'delete' ? 'D' : 'M'} ${f.path}`;
    })
    .join('\n');
}

function resultText(o: PatchOutcome, summary: string): string {
  const totals = `+${o.additions} -${o.removals}`;
  const head = o.dryRun
    ? `Patch checked (${totals}); dry_run: nothing was written:`
    : `Patch applied (${totals}):`;
  const lines = [head, summary];
  if (o.fuzz > 0) {
    lines.push(
      `Note: some lines matched only with ${FUZZ_NAMES[o.fuzz]} (fuzz ${o.fuzz}); unchanged lines kept the file's own text.`,
    );
  }
  return lines.join('\n');
}
