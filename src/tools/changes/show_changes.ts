// show_changes (docs/tools.md#review-points): what changed in the workspace since the last review point — files
// added, modified, deleted and renamed with their line counts — then the review point moves to now
// (git/review-points.ts). `since` compares an earlier point with now and moves nothing; `point` and `offset` are
// for the review card (the rest of a cut diff). The model reads the list and the totals only; an MCP Apps host
// gets the full patch in `_meta` (diff-meta.ts) when the client renders apps.
import * as z from 'zod';
import { ToolError } from '../../core/tool-error.js';
import type { Comparison } from '../../git/review-points.js';
import type { TreeChange } from '../../git/review-repo.js';
import { defineTool } from '../define.js';
import { lean } from '../result.js';
import { showPath } from '../git/shared.js';
import { DIFF_META_KEY, diffMeta } from './diff-meta.js';

const POINT_ID = z.string().min(1).max(64);

const input = z.object({
  since: POINT_ID.optional().describe('An earlier review point: compare it with now, moving nothing.'),
  point: POINT_ID.optional(),
  offset: z.number().int().min(0).optional(),
});

/**
 * No files: nothing changed. `first`: the first point, compared against HEAD or (no git) nothing. Each file is
 * one line, `<A|M|D|R> <path>[ +added][ -removed]` (`R <from> -> <path>`, ` (binary)`): a 20-file change reads in
 * well under 1 KB, where objects with their field names took half as much again.
 */
const output = z.object({
  point: z.string(),
  since: z.string().optional(),
  first: z.enum(['HEAD', 'nothing']).optional(),
  files: z.array(z.string()).optional(),
  totals: z
    .object({ files: z.number(), added: z.number().optional(), removed: z.number().optional() })
    .optional(),
});

const LETTER: Record<TreeChange['status'], string> = {
  added: 'A',
  modified: 'M',
  deleted: 'D',
  renamed: 'R',
};

function fileLine(f: TreeChange): string {
  const name = f.from !== undefined ? `${showPath(f.from)} -> ${showPath(f.path)}` : showPath(f.path);
  const counts =
    f.added === null ? ' (binary)' : `${f.added ? ` +${f.added}` : ''}${f.removed ? ` -${f.removed}` : ''}`;
  return `${LETTER[f.status]} ${name}${counts}`;
}

function heading(c: Comparison, added: number, removed: number): string {
  const moved = c.point !== 'now' && c.point !== c.since;
  const what =
    c.first === 'nothing'
      ? `First review point ${c.point} of this directory (no git): later calls show what changed since it.`
      : c.files.length === 0
        ? `Nothing new since ${c.since}.`
        : `${c.files.length} file(s) changed since ${c.since}${c.point === 'now' ? '' : ` (to ${c.point})`}, ` +
          `+${added} -${removed}:`;
  return moved && c.first !== 'nothing' ? `${what}\nReview point: ${c.point}.` : what;
}

export const showChangesTool = defineTool({
  name: 'show_changes',
  title: 'Show changes',
  description:
    'What changed in the workspace (files, +/- lines) since the last review point, which then moves to now. ' +
    'The first call compares with HEAD.',
  uses: ['reviews'],
  input,
  output,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  scope: 'workspace',
  async handler(args, ctx) {
    if (args.since === undefined && (args.point !== undefined || args.offset !== undefined))
      throw new ToolError(
        'INVALID_ARGUMENT',
        '`point` and `offset` go with `since` (they look again at an earlier comparison)',
        { argument: args.point !== undefined ? 'point' : 'offset' },
        { suggestion: 'Call show_changes without arguments, or give `since` too.' },
      );
    const reviews = ctx.runtime.reviews;
    const c = args.since !== undefined ? await reviews.compare(args.since, args.point) : await reviews.take();
    let added = 0;
    let removed = 0;
    for (const f of c.files) {
      added += f.added ?? 0;
      removed += f.removed ?? 0;
    }
    const files = c.files.map(fileLine);
    const structured = lean(
      {
        point: c.point,
        since: c.since || undefined,
        first: c.first,
        files: files.length ? files : undefined,
        totals: c.files.length ? { files: c.files.length, added, removed } : undefined,
      },
      ['point', 'files'],
    );
    const meta = ctx.ui ? { [DIFF_META_KEY]: await diffMeta(reviews, c, args.offset ?? 0) } : undefined;
    return { structured, text: [heading(c, added, removed), ...files].join('\n'), ...(meta ? { meta } : {}) };
  },
});
