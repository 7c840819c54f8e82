// What the five git tools share: finding the repository for a path argument
// (docs/design-notes.md#git-hardening), turning git's paths into workspace-relative ones, the output schema
// pieces and their lean result forms, and cutting a multi-file diff to a byte budget by whole files so the
// rest can be asked for with next_action.
import { realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import * as z from 'zod';
import { gitPath, nearestDir } from '../../git/args.js';
import { openRepo, type GitRepo } from '../../git/repo.js';
import { splitPatch, type FileChangeKind, type NumstatEntry } from '../../git/parse-diff.js';
import { toPosixRel } from '../../workspace/paths.js';
import type { ToolContext } from '../define.js';
import { lean } from '../result.js';

/** What running git takes of the server (git/run.ts GitHost): every git tool declares these in `uses`. */
export type GitServices = 'root' | 'config' | 'dirs' | 'signal' | 'jail' | 'sharedObjects';

export const gitPathArg = z.string().default('.').describe('Limits results to this directory or file.');

/**
 * Where the repository is (every git tool result): `repo_root` when its top is not the workspace root, `reason`
 * when `path` is in no repository (not an error). Neither: the workspace root is the top of the repository.
 */
export const REPO_FIELDS = {
  repo_root: z.string().optional(),
  reason: z.string().optional(),
};

/** REPO_FIELDS for a result: the top's workspace-relative path unless it is the workspace root. */
export function repoFields(
  ctx: ToolContext<'root'>,
  found: RepoOrNot,
): { repo_root?: string; reason?: string } {
  if (!found.repo) return { reason: found.reason };
  const top = repoRootRel(ctx, found.repo);
  return top === '.' ? {} : { repo_root: top };
}

/** An empty email (`<>`) is left out, as every field at its default (core/lean.ts). */
const PERSON = z.object({ name: z.string(), email: z.string().optional(), date: z.string() });

/** One commit as git_log lists it and git_show shows it; `committer` only when it differs from `author`. */
export const COMMIT = z.object({
  sha: z.string(),
  parents: z.array(z.string()).optional(),
  author: PERSON,
  committer: PERSON.optional(),
  refs: z.array(z.string()).optional(),
  subject: z.string().optional(),
  body: z.string().optional(),
  body_truncated: z.boolean().optional(),
});

type Person = z.input<typeof PERSON>;

/** Fields of a commit that are never empty, named so that their lean type says so (an empty subject goes). */
export const COMMIT_KEEP = ['sha', 'author', 'name', 'date'] as const;

/** A parsed commit as results carry it: lean, committer left out when it is the author. */
export function commitOut<C extends { sha: string; subject: string; author: Person; committer: Person }>(
  c: C,
) {
  const same =
    c.committer.name === c.author.name &&
    c.committer.email === c.author.email &&
    c.committer.date === c.author.date;
  return lean({ ...c, committer: same ? undefined : c.committer }, COMMIT_KEEP);
}

export const DEFAULT_DIFF_MAX_BYTES = 262_144;
export const MAX_DIFF_BYTES_LIMIT = 4 * 1024 * 1024;
export const MAX_PATHS = 1000;

export const pathsArg = z
  .array(z.string())
  .max(MAX_PATHS)
  .optional()
  .describe('Only these files or directories (no globs).');

export const maxBytesArg = z
  .number()
  .int()
  .min(1024)
  .max(MAX_DIFF_BYTES_LIMIT)
  .default(DEFAULT_DIFF_MAX_BYTES);

export interface PathScope {
  /** Workspace-relative path, as the caller named it. */
  rel: string;
  /** Literal pathspec for git: a directory's real path; a file's name under its directory's real path. */
  spec: string;
  /** Real directory the repository is looked up from (a file's nearest existing directory). */
  lookup: string;
  isDir: boolean;
  /** The path exists in the working tree (a deleted file is still a path in history). */
  exists: boolean;
}

/**
 * The `path` argument of git_status/git_diff/git_log (docs/design-notes.md#git-hardening): a directory or a
 * file in the workspace, or a path that exists only in history; it limits the command to itself.
 */
export function pathScope(ctx: ToolContext<'root'>, input: string): PathScope {
  const root = ctx.runtime.root.real;
  const g = gitPath(ctx.runtime.root, input, 'path');
  let isDir = false;
  try {
    isDir = g.exists && statSync(g.real).isDirectory();
  } catch {
    isDir = false;
  }
  if (isDir) return { rel: g.rel, spec: g.real, lookup: g.real, isDir, exists: true };
  // A file: its own name (a symlink stays the link git tracks) under the real path of its directory.
  const parent = g.exists ? realpathSync(path.dirname(g.spec)) : path.dirname(g.real);
  const spec = path.join(parent, path.basename(g.spec));
  return { rel: g.rel, spec, lookup: nearestDir(parent, root), isDir, exists: g.exists };
}

/** How results name the scope: `the workspace`, `src/`, `src/a.ts`. */
export function scopeName(scope: PathScope): string {
  return scope.rel === '.' ? 'the workspace' : scope.isDir ? `${scope.rel}/` : scope.rel;
}

/** A note for results when the path is in neither the working tree nor (apparently) the history. */
export function missingNote(scope: PathScope): string {
  return scope.exists ? '' : ` (${scope.rel} does not exist in the working tree)`;
}

export type RepoOrNot = { repo: GitRepo; reason?: undefined } | { repo: null; reason: string };

export async function repoFor(ctx: ToolContext<GitServices>, dirReal: string): Promise<RepoOrNot> {
  const r = await openRepo(ctx.runtime, dirReal, ctx.signal, { walkWithGit: true });
  return r.kind === 'repo' ? { repo: r.repo } : { repo: null, reason: r.reason };
}

/**
 * The workspace-relative path of a path git printed relative to `base` (the top). A trailing `/` (git's
 * mark of an untracked directory) is kept, so a directory never reads as a file.
 */
export function wsPath(ctx: ToolContext<'root'>, base: string, p: string): string {
  const rel = toPosixRel(ctx.runtime.root.real, path.join(base, p));
  return p.endsWith('/') && rel !== '.' ? `${rel}/` : rel;
}

/** The workspace-relative location of the repository's top (`.` when it is the workspace root). */
export function repoRootRel(ctx: ToolContext<'root'>, repo: GitRepo): string {
  return toPosixRel(ctx.runtime.root.real, repo.top);
}

/** Pathspec limiting git to `scope`, or none when it is the whole work tree (the fast, common case). */
export function scopeSpec(repo: GitRepo, scope: PathScope): string[] {
  return scope.isDir && scope.spec === repo.top ? [] : [scope.spec];
}

// ---- diff assembly -------------------------------------------------------------------------------------

export interface DiffFile {
  path: string;
  old_path: string | null;
  kind: FileChangeKind | 'unmerged';
  additions: number | null;
  deletions: number | null;
  binary: boolean;
  section: 'staged' | 'unstaged' | 'commit';
  /** Whether this file's diff is in the text: in full, cut (too large alone), or left for the next call. */
  shown: 'full' | 'partial' | 'omitted';
}

/** A changed file in a result: `shown` only when not in full; `section` only where the call asked for two. */
export const DIFF_FILE = z.object({
  path: z.string(),
  old_path: z.string().optional(),
  kind: z.enum(['added', 'deleted', 'modified', 'renamed', 'copied', 'unmerged']),
  additions: z.number().optional(),
  deletions: z.number().optional(),
  binary: z.boolean().optional(),
  section: z.enum(['staged', 'unstaged']).optional(),
  shown: z.enum(['partial', 'omitted']).optional(),
});

/** DiffFiles as results carry them (DIFF_FILE). */
export function diffFilesOut(files: DiffFile[], withSection: boolean): Array<z.output<typeof DIFF_FILE>> {
  return files.map((f) =>
    lean(
      {
        ...f,
        section: withSection && f.section !== 'commit' ? f.section : undefined,
        shown: f.shown === 'full' ? undefined : f.shown,
      },
      ['path'],
    ),
  );
}

export interface DiffSectionInput {
  section: DiffFile['section'];
  /** Heading printed before the section when more than one section has changes. */
  heading: string;
  /** Files from numstat (paths already workspace-relative). */
  files: Array<Omit<DiffFile, 'shown' | 'kind'> & { kind?: DiffFile['kind'] }>;
  /** The patch text (null when the diff was not asked for). */
  patch: string | null;
  /** The patch stopped at its byte bound (its last section is incomplete). */
  patchCut: boolean;
  /** Maps a path from a patch header to the workspace-relative path used in `files`. */
  toWs: (p: string) => string;
}

export interface AssembledDiff {
  text: string;
  files: DiffFile[];
  truncated: boolean;
  /** Bytes of diff text returned. */
  bytes: number;
}

/** Cuts `buf` to at most `max` bytes at the last line end (or UTF-8 boundary when there is none). */
function cutText(text: string, max: number): string {
  const b = Buffer.from(text);
  if (b.length <= max) return text;
  let n = b.lastIndexOf(0x0a, max - 1) + 1;
  if (n === 0) {
    n = max;
    while (n > 0 && ((b[n] as number) & 0xc0) === 0x80) n--;
  }
  return b.subarray(0, n).toString('utf8');
}

const INDEX_LINE = /^index [0-9a-f]+\.\.[0-9a-f]+(?: [0-7]+)?\n/m;

/** A file's section without its `index <blob>..<blob>` header line: blob ids tell a model nothing. */
function dropIndexLine(text: string): string {
  const hunk = text.indexOf('\n@@');
  const head = hunk < 0 ? text : text.slice(0, hunk + 1);
  return head.replace(INDEX_LINE, '') + text.slice(head.length);
}

/** A section's files, one per path: numstat lists an unmerged path once per stage (kept once, larger counts). */
function sectionFiles(s: DiffSectionInput): { byPath: Map<string, DiffFile>; own: DiffFile[] } {
  const byPath = new Map<string, DiffFile>();
  const own: DiffFile[] = [];
  for (const f of s.files) {
    const prevSame = byPath.get(f.path);
    if (prevSame) {
      prevSame.kind = 'unmerged';
      if ((f.additions ?? 0) + (f.deletions ?? 0) > (prevSame.additions ?? 0) + (prevSame.deletions ?? 0)) {
        prevSame.additions = f.additions;
        prevSame.deletions = f.deletions;
      }
      continue;
    }
    const d: DiffFile = { ...f, kind: f.kind ?? 'modified', shown: s.patch === null ? 'full' : 'omitted' };
    byPath.set(f.path, d);
    own.push(d);
  }
  return { byPath, own };
}

/**
 * Joins sections into one text of at most maxBytes, file by file in git's order. The first file that does
 * not fit ends the text (shown partially when nothing was shown before it); it and every later file are
 * `omitted` and listed for next_action.
 */
export function assembleDiff(inputs: DiffSectionInput[], maxBytes: number): AssembledDiff {
  const withChanges = inputs.filter((s) => s.files.length > 0 || (s.patch ?? '').length > 0);
  const headed = withChanges.length > 1;
  const out: string[] = [];
  const files: DiffFile[] = [];
  let used = 0;
  let stopped = false;
  for (const s of inputs) {
    const { byPath, own } = sectionFiles(s);
    files.push(...own);
    if (s.patch === null) continue;
    const sections = splitPatch(s.patch);
    const seen = new Set<DiffFile>();
    if (headed && sections.length > 0 && !stopped) out.push(s.heading + '\n');
    sections.forEach((sec, i) => {
      const f = sec.path === null ? undefined : byPath.get(s.toWs(sec.path));
      if (f) {
        seen.add(f);
        if (sec.combined) f.kind = 'unmerged';
        else if (f.kind === 'modified') f.kind = sec.kind;
        f.binary ||= sec.binary;
      }
      if (stopped) return;
      const complete = i < sections.length - 1 || !s.patchCut;
      const secText = dropIndexLine(sec.text);
      const size = Buffer.byteLength(secText);
      if (complete && used + size <= maxBytes) {
        out.push(secText);
        used += size;
        if (f) f.shown = 'full';
        return;
      }
      stopped = true;
      if (used === 0 && f) {
        const part = cutText(secText, maxBytes);
        out.push(part);
        used += Buffer.byteLength(part);
        f.shown = 'partial';
      }
    });
    // Files with no section (nothing to show, e.g. an unmerged path in the index) are shown unless the patch was cut.
    for (const f of own) if (!seen.has(f) && !s.patchCut) f.shown = 'full';
  }
  const truncated = files.some((f) => f.shown !== 'full');
  return { text: out.join(''), files, truncated, bytes: used };
}

/** numstat entries → DiffSectionInput files. */
export function numstatFiles(
  entries: NumstatEntry[],
  section: DiffFile['section'],
  toWs: (p: string) => string,
): DiffSectionInput['files'] {
  return entries.map((e) => ({
    path: toWs(e.path),
    old_path: e.oldPath === undefined ? null : toWs(e.oldPath),
    kind: e.oldPath === undefined ? undefined : 'renamed',
    additions: e.additions,
    deletions: e.deletions,
    binary: e.additions === null,
    section,
  }));
}

/** One line per file: `+3 -1  src/a.ts`, `bin  img.png`, `+0 -0  old.ts -> new.ts`. */
export function fileLine(f: DiffFile): string {
  const counts = f.binary || f.additions === null ? 'bin' : `+${f.additions} -${f.deletions}`;
  const name =
    f.old_path && f.old_path !== f.path ? `${showPath(f.old_path)} -> ${showPath(f.path)}` : showPath(f.path);
  const kind = f.kind === 'modified' ? '' : ` (${f.kind})`;
  return `${counts}  ${name}${kind}`;
}

// eslint-disable-next-line no-control-regex
const NEEDS_QUOTE = /[\x00-\x1f\x7f"]/;

/** A path for model-facing text: as is, JSON-quoted only when it holds control characters or quotes. */
export function showPath(p: string): string {
  return NEEDS_QUOTE.test(p) ? JSON.stringify(p) : p;
}
