// git_diff (docs/tools.md#git): staged (index vs HEAD) and/or unstaged (working tree vs index) changes of the
// repository that contains `path`, limited to `path` or to `paths`. The file list comes from numstat and is
// complete; the text is the unified diff cut to max_bytes by whole files, with next_action naming the files
// still to show. In a workspace that is not a repository it shows what apply_patch changed since start-up
// (git/baseline). Runs git with external diff and textconv off. `index <blob>..<blob>` lines are left out.
import * as z from 'zod';
import { ToolError } from '../../core/tool-error.js';
import { gitPath, type GitPath } from '../../git/args.js';
import { baselineChanges } from '../../git/baseline.js';
import { parseNumstatZ, splitNumstatPatch } from '../../git/parse-diff.js';
import { gitFailed, runGit } from '../../git/run.js';
import type { GitRepo } from '../../git/repo.js';
import { NEXT_ACTION } from '../schema.js';
import { defineTool, READ_ONLY, type ToolContext } from '../define.js';
import { callText, lean } from '../result.js';
import {
  assembleDiff,
  DEFAULT_DIFF_MAX_BYTES,
  DIFF_FILE,
  diffFilesOut,
  fileLine,
  gitPathArg,
  maxBytesArg,
  MAX_PATHS,
  missingNote,
  numstatFiles,
  pathScope,
  pathsArg,
  REPO_FIELDS,
  repoFields,
  repoFor,
  scopeSpec,
  wsPath,
  type AssembledDiff,
  type DiffFile,
  type DiffSectionInput,
  type PathScope,
  type GitServices,
  type RepoOrNot,
} from './shared.js';

export const MAX_CONTEXT_LINES = 1000;

const input = z.object({
  path: gitPathArg,
  paths: pathsArg,
  staged: z.boolean().default(false),
  unstaged: z.boolean().default(true),
  context_lines: z.number().int().min(0).max(MAX_CONTEXT_LINES).default(3),
  max_bytes: maxBytesArg,
});

/** source: "since_start" outside a repository (changes made through apply_patch since start-up). */
const output = z.object({
  ...REPO_FIELDS,
  source: z.literal('since_start').optional(),
  files: z.array(DIFF_FILE).optional(),
  diff: z.string().optional(),
  truncated: z.boolean().optional(),
  next_action: NEXT_ACTION.optional(),
});

type Args = z.output<typeof input>;

const COMMON = [
  '--no-color',
  '--no-ext-diff',
  '--no-textconv',
  '--ignore-submodules=dirty',
  '--submodule=short',
  '-M',
];

/** Room for the numstat records ahead of the patch in one git run's output; past it, two runs (numstat, patch). */
const NUMSTAT_ROOM = 1024 * 1024;

async function gitSection(
  ctx: ToolContext<GitServices>,
  repo: GitRepo,
  staged: boolean,
  specs: string[],
  args: Args,
): Promise<DiffSectionInput> {
  const base = ['diff', ...(staged ? ['--cached'] : []), ...COMMON];
  const tail = specs.length ? ['--', ...specs] : [];
  const opts = { cwd: repo.cwd, pin: repo.pin, filterArgs: repo.filterArgs, signal: ctx.signal };
  const patchArgs = ['--patch', `--unified=${args.context_lines}`];
  const one = await runGit(ctx.runtime, [...base, '--numstat', '-z', ...patchArgs, ...tail], {
    ...opts,
    maxStdoutBytes: args.max_bytes + 1 + NUMSTAT_ROOM,
  });
  if (one.code !== 0 && !one.truncated) throw gitFailed('diff', one);
  let split = splitNumstatPatch(one.stdout, one.truncated, args.max_bytes);
  if (!split) {
    // More file names than NUMSTAT_ROOM holds: the list and the patch each from a run of its own.
    const [num, patch] = await Promise.all([
      runGit(ctx.runtime, [...base, '--numstat', '-z', ...tail], opts),
      runGit(ctx.runtime, [...base, ...patchArgs, ...tail], { ...opts, maxStdoutBytes: args.max_bytes + 1 }),
    ]);
    if (num.code !== 0) throw gitFailed('diff', num);
    if (patch.code !== 0 && !patch.truncated) throw gitFailed('diff', patch);
    split = { num: num.stdout, patch: patch.stdout, cut: patch.truncated };
  }
  const toWs = (p: string) => wsPath(ctx, repo.top, p);
  return {
    section: staged ? 'staged' : 'unstaged',
    heading: staged ? '# staged (index vs HEAD)' : '# unstaged (working tree vs index)',
    files: numstatFiles(parseNumstatZ(split.num).entries, staged ? 'staged' : 'unstaged', toWs),
    patch: split.patch.toString('utf8'),
    patchCut: split.cut,
    toWs,
  };
}

function sinceStartSection(
  ctx: ToolContext<'root' | 'baseline' | 'log'>,
  dir: PathScope,
  only: string[] | undefined,
  args: Args,
): DiffSectionInput {
  const changes = baselineChanges(ctx.runtime, { dirRel: dir.rel, only, context: args.context_lines });
  return {
    section: 'unstaged',
    heading: '',
    files: changes.map((c) => ({
      path: c.path,
      old_path: null,
      kind: c.kind,
      additions: c.additions,
      deletions: c.deletions,
      binary: c.binary,
      section: 'unstaged',
    })),
    patch: changes.map((c) => c.text).join(''),
    patchCut: false,
    toWs: (p) => p,
  };
}

function nextCall(args: Args, dir: PathScope, d: AssembledDiff): Record<string, unknown> | null {
  const rest = d.files.filter((f) => f.shown === 'omitted');
  const partial = d.files.find((f) => f.shown === 'partial');
  let targets = rest;
  let maxBytes = args.max_bytes;
  if (partial && rest.every((f) => f.path === partial.path)) {
    // Only the oversized file is left: the next call can only help with a larger budget.
    if (args.max_bytes >= 4 * 1024 * 1024) return null;
    targets = [partial];
    maxBytes = 4 * 1024 * 1024;
  } else targets = rest.filter((f) => f.path !== partial?.path);
  if (targets.length === 0) return null;
  const paths = [
    ...new Set(
      targets.flatMap((f) => (f.old_path && f.old_path !== f.path ? [f.old_path, f.path] : [f.path])),
    ),
  ].slice(0, MAX_PATHS);
  const next: Record<string, unknown> = {};
  if (dir.rel !== '.') next.path = dir.rel;
  next.paths = paths;
  if (targets.some((f) => f.section === 'staged')) next.staged = true;
  if (!targets.some((f) => f.section === 'unstaged')) next.unstaged = false;
  if (args.context_lines !== 3) next.context_lines = args.context_lines;
  if (maxBytes !== DEFAULT_DIFF_MAX_BYTES) next.max_bytes = maxBytes;
  return next;
}

/** The sections to show: git's staged and unstaged diffs, or outside a repository what apply_patch changed. */
async function diffSections(
  ctx: ToolContext<GitServices | 'baseline' | 'log'>,
  args: Args,
  dir: PathScope,
  only: GitPath[] | undefined,
  found: RepoOrNot,
): Promise<DiffSectionInput[]> {
  if (!found.repo)
    return args.unstaged
      ? [
          sinceStartSection(
            ctx,
            dir,
            only?.map((p) => p.rel),
            args,
          ),
        ]
      : [];
  const repo = found.repo;
  const specs = only ? only.map((p) => p.spec) : scopeSpec(repo, dir);
  const want = [...(args.staged ? [true] : []), ...(args.unstaged ? [false] : [])];
  return Promise.all(want.map((staged) => gitSection(ctx, repo, staged, specs, args)));
}

/** What an empty diff says. */
function noChanges(args: Args, dir: PathScope, source: 'git' | 'since_start'): string[] {
  const what =
    source === 'since_start'
      ? 'no changes since start-up'
      : args.staged && args.unstaged
        ? 'no staged or unstaged changes'
        : args.staged
          ? 'no staged changes'
          : 'no unstaged changes';
  const lines = [
    what +
      (source === 'git' ? ' (untracked files are not diffed; git_status lists them)' : '') +
      missingNote(dir),
  ];
  if (source === 'since_start' && !args.unstaged)
    lines.push('(outside a repository there is no index: pass unstaged: true)');
  return lines;
}

/** The note after a cut diff: how much was shown and the call that continues. */
function cutNote(args: Args, d: AssembledDiff, next: Record<string, unknown> | null): string {
  const shown = d.files.filter((f) => f.shown === 'full').length;
  let note = `[diff cut at max_bytes=${args.max_bytes}: ${shown} of ${d.files.length} files shown in full`;
  const partial = d.files.find((f) => f.shown === 'partial');
  if (partial)
    note += `; ${partial.path} alone is larger (try context_lines: 0 or a larger max_bytes, or read_file)`;
  if (next) note += `; more: ${callText('git_diff', next)}`;
  return `${note}]`;
}

export const gitDiffTool = defineTool({
  name: 'git_diff',
  title: 'Git diff',
  description:
    'Show uncommitted changes as a unified diff, cut to max_bytes by whole files (next_action continues). ' +
    'Outside a git repository: the changes apply_patch made since start-up.',
  uses: ['root', 'config', 'dirs', 'signal', 'jail', 'sharedObjects', 'baseline', 'log'],
  input,
  output,
  annotations: READ_ONLY,
  scope: 'workspace',
  async handler(args, ctx) {
    if (!args.staged && !args.unstaged) {
      throw new ToolError(
        'INVALID_ARGUMENT',
        'staged and unstaged are both false, so there is nothing to show',
        {},
        {
          retry: callText('git_diff', { path: args.path, staged: true, unstaged: true }),
        },
      );
    }
    const dir = pathScope(ctx, args.path);
    const only = args.paths?.map((p, i) => gitPath(ctx.runtime.root, p, `paths[${i}]`));
    const found = await repoFor(ctx, dir.lookup);
    const source = found.repo ? 'git' : 'since_start';
    const d = assembleDiff(await diffSections(ctx, args, dir, only, found), args.max_bytes);
    const next = d.truncated ? nextCall(args, dir, d) : null;
    const structured: z.output<typeof output> = {
      ...lean(
        {
          ...repoFields(ctx, found),
          source: source === 'since_start' ? source : undefined,
          files: diffFilesOut(d.files, args.staged),
          diff: d.text,
          truncated: d.truncated,
        },
        ['path'],
      ),
      ...(next ? { next_action: { tool: 'git_diff', arguments: next } } : {}),
    };
    const lines: string[] = [];
    if (source === 'since_start')
      lines.push(
        `[${dir.rel} is not in a git repository (${found.reason}); showing changes made through apply_patch since start-up]`,
      );
    if (d.files.length === 0)
      return { structured, text: [...lines, ...noChanges(args, dir, source)].join('\n') };
    if (d.files.length > 1 || d.truncated)
      lines.push(...d.files.map((f) => `${fileLine(f)}${shownNote(f)}`), '');
    let text = lines.join('\n') + d.text;
    if (d.truncated) text += `${text.endsWith('\n') ? '' : '\n'}${cutNote(args, d, next)}`;
    return { structured, text };
  },
});

function shownNote(f: DiffFile): string {
  return f.shown === 'full' ? '' : f.shown === 'partial' ? '  [cut]' : '  [not shown]';
}
