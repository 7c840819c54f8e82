// apply_patch (tool-contract "apply_patch"): the only tool that writes files. Validates arguments, runs the
// patch engine against the runtime's workspace and per-file locks, and writes the result for a model: one
// line of totals, the A/M/D/R summary, and a note when fuzzy matching was needed.
import { z } from 'zod';
import { recordBeforeWrite } from '../../git/baseline.js';
import { applyPatch, type PatchOutcome } from '../../patch/engine.js';
import { FUZZ_NAMES } from '../../patch/line-index.js';
import { defineTool } from '../define.js';

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
  'Change files in the workspace with a patch — the only tool that writes files. Format:\n\n' +
  `${EXAMPLE}\n\n` +
  'Per file: "*** Update File: PATH" (optionally followed by "*** Move to: NEW_PATH"), "*** Add File: PATH" ' +
  '(every line starts with "+"), or "*** Delete File: PATH". In a hunk, lines start with " " (unchanged ' +
  'context), "-" (removed) or "+" (added); give about 3 context lines around each change. "@@ <line>" names a ' +
  'line above the change (e.g. the function signature) and the hunk is placed after it; "*** End of File" pins ' +
  'a hunk to the end of the file. Paths are relative to the workspace root. A unified diff as `git diff` ' +
  'prints it is accepted too. Matching tolerates whitespace and typographic-quote slips (reported as fuzz) ' +
  'but never guesses between two places. Everything is checked before anything is written; a multi-file patch ' +
  'applies completely or not at all. dry_run: true checks the patch and writes nothing.';

const input = z.object({
  patch: z
    .string()
    .min(1)
    .describe('The patch text: "*** Begin Patch" … "*** End Patch", or a unified diff.'),
  dry_run: z.boolean().default(false).describe('Validate and match the patch without writing anything.'),
});

const output = z.object({
  affected_files: z
    .array(
      z.object({
        path: z.string(),
        operation: z.enum(['add', 'update', 'delete', 'move']),
        old_path: z.string().optional().describe('For a move: where the file was.'),
      }),
    )
    .describe('Files the patch changes, in patch order.'),
  additions: z.number().int().describe('Lines added.'),
  removals: z.number().int().describe('Lines removed.'),
  fuzz: z
    .number()
    .int()
    .min(0)
    .max(3)
    .describe(
      'Loosest matching tier any hunk needed: 0 exact, 1 trailing whitespace ignored, 2 surrounding whitespace ignored, 3 Unicode dashes/quotes/spaces folded.',
    ),
  summary: z.string().describe('One line per file: "A path", "M path", "D path", or "R old_path -> path".'),
  dry_run: z.boolean().describe('True when nothing was written.'),
});

export const applyPatchTool = defineTool({
  name: 'apply_patch',
  title: 'Apply patch',
  description: DESCRIPTION,
  input,
  output,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  async handler(args, ctx) {
    const rt = ctx.runtime;
    // git/baseline keeps each file's original (first change only) so git_diff works outside a repository.
    const beforeWrite = (files: string[]) => files.forEach((f) => recordBeforeWrite(rt, f));
    const outcome = await applyPatch(
      { root: rt.root, locks: rt.patchLocks, log: rt.log, beforeWrite },
      args.patch,
      {
        dryRun: args.dry_run,
      },
    );
    const summary = summaryLines(outcome);
    const structured: Record<string, unknown> = {
      affected_files: outcome.affected,
      additions: outcome.additions,
      removals: outcome.removals,
      fuzz: outcome.fuzz,
      summary,
      dry_run: outcome.dryRun,
    };
    return { structured, text: resultText(outcome, summary) };
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
  const n = o.affected.length;
  const totals = `${n} file(s) (+${o.additions} -${o.removals})`;
  const head = o.dryRun
    ? `Patch validated: it would change ${totals}. dry_run: nothing was written.`
    : `Patch applied to ${totals}.`;
  const lines = [head, summary];
  if (o.fuzz > 0) {
    lines.push(
      `Note: some lines matched only with ${FUZZ_NAMES[o.fuzz]} (fuzz ${o.fuzz}); unchanged lines kept the file's own text.`,
    );
  }
  return lines.join('\n');
}
