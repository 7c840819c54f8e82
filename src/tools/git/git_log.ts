// git_log (docs/tools.md#git): commits reachable from `ref`, newest first, limited to commits that touch
// `path` when it is not the whole work tree; paged with skip, next_action carries the next page. One line per
// commit in the text; the structured result has parents, author, committer, refs and the message body.
import * as z from 'zod';
import { validateRev } from '../../git/args.js';
import { LOG_FORMAT, parseLog } from '../../git/parse-log.js';
import { classifyGitFailure } from '../../git/failure.js';
import { gitFailed, runGit } from '../../git/run.js';
import type { GitRepo } from '../../git/repo.js';
import type { ArgvResult } from '../../process/jail/argv.js';
import { ToolError } from '../../core/tool-error.js';
import { NEXT_ACTION } from '../schema.js';
import { callText, lean } from '../result.js';
import { defineTool, READ_ONLY, type ToolContext } from '../define.js';
import { explicitArgs } from '../common.js';
import {
  COMMIT,
  COMMIT_KEEP,
  commitOut,
  gitPathArg,
  missingNote,
  pathScope,
  REPO_FIELDS,
  repoFields,
  repoFor,
  scopeName,
  scopeSpec,
  type GitServices,
} from './shared.js';

export const MAX_LOG_COUNT = 500;
const LOG_MAX_BYTES = 8 * 1024 * 1024;

const input = z.object({
  path: gitPathArg,
  ref: z.string().default('HEAD').describe('Also a range such as "main..feature".'),
  max_count: z.number().int().min(1).max(MAX_LOG_COUNT).default(20),
  skip: z.number().int().min(0).default(0),
});

const output = z.object({
  ...REPO_FIELDS,
  commits: z.array(COMMIT).optional(),
  has_more: z.boolean().optional(),
  next_action: NEXT_ACTION.optional(),
});

type Args = z.output<typeof input>;

/** git log for one page (one commit more than asked, to know whether more follow), or `empty` on an unborn branch. */
async function runLog(
  ctx: ToolContext<GitServices>,
  repo: GitRepo,
  args: Args,
  ref: string,
  spec: string[],
): Promise<ArgvResult | 'empty'> {
  const argv = ['log', '-z', `--format=${LOG_FORMAT}`, '--no-color', '--no-show-signature'];
  argv.push(`--max-count=${args.max_count + 1}`);
  if (args.skip) argv.push(`--skip=${args.skip}`);
  argv.push('--end-of-options', ref, '--', ...spec);
  const r = await runGit(ctx.runtime, argv, {
    cwd: repo.cwd,
    pin: repo.pin,
    filterArgs: repo.filterArgs,
    maxStdoutBytes: LOG_MAX_BYTES,
    signal: ctx.signal,
  });
  if (r.code === 0 || r.truncated) return r;
  const failure = classifyGitFailure(r);
  if (
    failure.kind === 'no_commits' ||
    (failure.kind === 'unknown_revision' && failure.mentionsHead && ref === 'HEAD')
  )
    return 'empty';
  if (failure.kind === 'unknown_revision') {
    throw new ToolError(
      'NOT_FOUND',
      `revision ${JSON.stringify(ref)} not found`,
      { ref },
      {
        suggestion:
          'Use a branch, tag or commit id that exists; git_log {"ref": "HEAD"} lists recent commits.',
      },
    );
  }
  throw gitFailed('log', r);
}

export const gitLogTool = defineTool({
  name: 'git_log',
  title: 'Git log',
  description: 'List the commits reachable from ref that touch path, newest first (next_action continues).',
  uses: ['root', 'config', 'dirs', 'signal', 'jail', 'sharedObjects'],
  input,
  output,
  annotations: READ_ONLY,
  scope: 'workspace',
  async handler(args, ctx) {
    const ref = validateRev(args.ref, 'ref', 'git_log');
    const dir = pathScope(ctx, args.path);
    const found = await repoFor(ctx, dir.lookup);
    if (!found.repo) {
      return {
        structured: repoFields(ctx, found),
        text: `${dir.rel} is not in a git repository (${found.reason}); there is no history to show.`,
      };
    }
    const spec = scopeSpec(found.repo, dir);
    const r = await runLog(ctx, found.repo, args, ref, spec);
    if (r === 'empty') return { structured: repoFields(ctx, found), text: 'no commits yet' };
    const parsed = parseLog(r.stdout);
    const commits = parsed.commits.slice(0, args.max_count);
    const hasMore = parsed.commits.length > args.max_count || (r.truncated && commits.length > 0);
    const lines = commits.map((c) => {
      const refs = c.refs.length ? ` (${c.refs.join(', ')})` : '';
      return `${c.sha.slice(0, 10)} ${c.author.date.slice(0, 10)} ${c.author.name}: ${c.subject}${refs}`;
    });
    if (commits.length === 0)
      lines.push((args.skip ? `no commits after skipping ${args.skip}` : 'no commits') + missingNote(dir));
    if (spec.length) lines.unshift(`[commits touching ${scopeName(dir)}]`);
    let next: Record<string, unknown> | undefined;
    if (hasMore) {
      next = {
        ...explicitArgs(input, { path: dir.rel, ref, max_count: args.max_count }),
        skip: args.skip + commits.length,
      };
      lines.push(`[more: ${callText('git_log', next)}]`);
    }
    const structured: z.output<typeof output> = {
      ...repoFields(ctx, found),
      ...lean({ commits: commits.map(commitOut), has_more: hasMore }, COMMIT_KEEP),
      ...(next ? { next_action: { tool: 'git_log', arguments: next } } : {}),
    };
    return { structured, text: lines.join('\n') };
  },
});
