// edit_file below the tool layer (docs/tools.md#editing-files): one file, old_string → new_string, through
// the patch engine's own parts — confined target (targets), per-file lock and atomic commit with baseline
// recheck and rollback (engine.commitPlan → commit), text decoding that keeps BOM and line endings
// (text-doc). Exact matches only: a near miss (whitespace, line endings, typographic punctuation) is reported
// with the file's own text to send instead, never applied. An empty old_string creates a file that must not
// exist.
import { yieldToLoop } from '../core/slice.js';
import { ToolError } from '../core/tool-error.js';
import type { Baseline } from './commit.js';
import {
  findNearMiss,
  lfOnly,
  lineOf,
  lineTotals,
  countLines,
  NEAR_MISS_NAMES,
  MAX_REPLACEMENTS,
  occurrences,
  renderEdit,
  viewOf,
  type EditView,
  type NearMiss,
} from './edit-text.js';
import { beforeWriting, commitPlan, type ApplyOptions, type PatchEnv } from './engine.js';
import { probe, readSnapshot, type Snapshot } from './fs-safe.js';
import { LineIndex } from './line-index.js';
import { MAX_PATCH_FILE_BYTES, NEW_FILE_MODE, type AffectedFile, type Plan } from './plan.js';
import {
  cutNote,
  MAX_COMPARED_CHARS,
  oneSearchAtATime,
  searchBudgets,
  searchCuts,
  type SearchCut,
} from './search-budget.js';
import { nearestRegion, type Region } from './similar.js';
import { missingDirs, resolveFileTarget, type Target } from './targets.js';
import type { TextDoc } from './text-doc.js';
import { decodeForWrite } from './decode.js';

export interface EditRequest {
  path: string;
  oldString: string;
  newString: string;
  replaceAll: boolean;
}

/** What edit_file changes: one file, created or updated. */
export type EditedFile = AffectedFile & { operation: 'add' | 'update' };

export interface EditOutcome {
  affected: EditedFile[];
  additions: number;
  removals: number;
  /** How many places were replaced (0 for a new file). */
  replacements: number;
}

interface EditPlan extends Plan {
  affected: EditedFile[];
  replacements: number;
}

const EXISTING = { file: 'a file', dir: 'a directory', symlink: 'a symbolic link', other: 'a special file' };

/** Match lines listed in EDIT_AMBIGUOUS and near-miss errors. */
const MAX_LISTED_MATCHES = 20;
const TOOL = 'edit_file';
/** Files from this size on are decoded in a stretch of their own (the event loop runs between). */
const LARGE_FILE_BYTES = 256 * 1024;

export async function editFile(
  env: PatchEnv,
  req: EditRequest,
  opts: Pick<ApplyOptions, 'hooks'> = {},
): Promise<EditOutcome> {
  const replacement = lfOnly(req.newString);
  if (req.oldString !== '' && (req.newString === req.oldString || replacement === req.oldString)) {
    throw new ToolError(
      'INVALID_ARGUMENT',
      'new_string is the same as old_string: there is nothing to change',
      { argument: 'new_string' },
      { suggestion: 'Send the text the file should have instead as new_string.' },
    );
  }
  const t = beforeWriting(env.root, () => resolveFileTarget(env.root, req.path, TOOL));
  try {
    const plan = await commitPlan(
      env,
      [t.file],
      () => (req.oldString === '' ? planCreate(t, req.newString) : planReplace(t, req, replacement)),
      opts,
    );
    return {
      affected: plan.affected,
      additions: plan.additions,
      removals: plan.removals,
      replacements: plan.replacements,
    };
  } catch (e) {
    throw conflictAsEdit(e);
  }
}

function planCreate(t: Target, content: string): EditPlan {
  const p = probe(t.file);
  if (p.kind !== 'missing') {
    throw new ToolError(
      'PATCH_FAILED',
      `cannot create ${t.rel}: ${EXISTING[p.kind]} already exists there (an empty old_string creates a new file)`,
      { path: t.rel, reason: 'exists' },
      {
        suggestion:
          p.kind === 'file'
            ? `To change it, set old_string to the exact text to replace; read it first: read_file ${JSON.stringify({ path: t.rel })}`
            : 'Choose another path.',
      },
    );
  }
  return {
    steps: [
      {
        kind: 'create',
        rel: t.rel,
        dir: t.dir,
        name: t.name,
        content: Buffer.from(content, 'utf8'),
        mode: NEW_FILE_MODE,
        missingDirs: missingDirs(t),
      },
    ],
    affected: [{ path: t.rel, operation: 'add' }],
    additions: countLines(content),
    removals: 0,
    fuzz: 0,
    replacements: 0,
  };
}

async function planReplace(t: Target, req: EditRequest, replacement: string): Promise<EditPlan> {
  const snap = readExisting(t);
  const v = viewOf(decodeText(t, snap.buf));
  // Reading and decoding a large file takes tens of milliseconds; so does the search: not in one stretch.
  if (snap.buf.length > LARGE_FILE_BYTES) await yieldToLoop();
  const old = req.oldString;
  const hits = occurrences(v.text, old, !req.replaceAll);
  if (hits.length === 0) throw await oneSearchAtATime(() => notFound(t, v, req));
  if (hits.length > 1 && !req.replaceAll) throw ambiguous(t, v, hits);
  refuseHuge(t, snap.buf.length, hits.length, Buffer.byteLength(old), Buffer.byteLength(replacement, 'utf8'));
  const content = renderEdit(v, hits, old.length, replacement);
  const baseline: Baseline = { bytes: snap.buf, mode: snap.mode };
  return {
    steps: [{ kind: 'replace', rel: t.rel, dir: t.dir, name: t.name, content, mode: snap.mode, baseline }],
    affected: [{ path: t.rel, operation: 'update' }],
    ...lineTotals(v, hits, old.length, replacement),
    fuzz: 0,
    replacements: hits.length,
  };
}

/**
 * Bounds what one call may build: at most MAX_REPLACEMENTS places, and a result within the size limit for
 * patching (each place removes at least old_string's bytes, more where its line breaks are CRLF).
 */
function refuseHuge(t: Target, size: number, count: number, oldBytes: number, newBytes: number): void {
  const most = size + count * (newBytes - oldBytes);
  if (count <= MAX_REPLACEMENTS && most <= MAX_PATCH_FILE_BYTES) return;
  throw new ToolError(
    'PATCH_FAILED',
    count > MAX_REPLACEMENTS
      ? `cannot edit ${t.rel}: old_string occurs more than ${MAX_REPLACEMENTS} times`
      : `cannot edit ${t.rel}: the result would be up to ${most} bytes, over the ${MAX_PATCH_FILE_BYTES}-byte limit`,
    { path: t.rel, reason: 'too_large' },
    { suggestion: 'Change it with exec_command (e.g. sed) instead, or a narrower old_string.' },
  );
}

/** The existing file to edit, refused as apply_patch refuses an Update it cannot do (docs/tools.md#editing-files). */
function readExisting(t: Target): Snapshot {
  const p = probe(t.file);
  const refuse = (message: string, reason: string, suggestion?: string) =>
    new ToolError(
      'PATCH_FAILED',
      `cannot edit ${t.rel}: ${message}`,
      { path: t.rel, reason },
      { suggestion },
    );
  if (p.kind === 'missing') {
    throw new ToolError(
      'NOT_FOUND',
      `file not found: ${t.rel}`,
      { path: t.rel },
      {
        suggestion: `Check the path (list_files {"patterns":["**/${t.name}"]}); to create the file, send old_string "".`,
      },
    );
  }
  if (p.kind === 'dir') {
    throw new ToolError(
      'IS_DIRECTORY',
      `${t.rel} is a directory, not a file`,
      { path: t.rel },
      { suggestion: 'edit_file changes one file; name a file path (list_dir shows what is there).' },
    );
  }
  if (p.kind === 'symlink') {
    throw refuse(
      `it is a symbolic link (to ${p.target}); edit_file never writes through symlinks`,
      'symlink',
      'Edit the file the link points to, by its own path.',
    );
  }
  if (p.kind === 'other') throw refuse('it is not a regular file', 'not_regular_file');
  if (p.stat.size > MAX_PATCH_FILE_BYTES) {
    throw refuse(
      `it is ${p.stat.size} bytes, over the ${MAX_PATCH_FILE_BYTES}-byte limit for editing`,
      'too_large',
      'Change it with exec_command (e.g. sed) instead.',
    );
  }
  return readSnapshot(t.file);
}

function decodeText(t: Target, buf: Buffer): TextDoc {
  return decodeForWrite(buf, { rel: t.rel, verb: 'edit', tool: 'edit_file' });
}

function lineList(v: EditView, starts: readonly number[]): number[] {
  return starts.slice(0, MAX_LISTED_MATCHES).map((s) => lineOf(v, s) + 1);
}

function listed(lines: readonly number[], total: number): string {
  return `line${total > 1 ? 's' : ''} ${lines.join(', ')}${total > lines.length ? ', …' : ''}`;
}

function ambiguous(t: Target, v: EditView, hits: readonly number[]): ToolError {
  const lines = lineList(v, hits);
  const times = hits.length > MAX_REPLACEMENTS ? `more than ${MAX_REPLACEMENTS}` : String(hits.length);
  return new ToolError(
    'EDIT_AMBIGUOUS',
    `${t.rel}: old_string occurs ${times} times (${listed(lines, hits.length)}); it must occur once`,
    { path: t.rel, match_count: hits.length, match_lines: lines },
    {
      suggestion:
        'Add the lines around the place you mean to old_string (and new_string) so it occurs once, or set replace_all: true to change every occurrence.',
    },
  );
}

/**
 * EDIT_NOT_FOUND with what the bounded searches found (search-budget.ts): a near miss (same text but for
 * whitespace, line endings or punctuation), else the most similar region; each says when its search was cut.
 */
async function notFound(t: Target, v: EditView, req: EditRequest): Promise<ToolError> {
  const budgets = searchBudgets();
  const { near, cut: nearCut } = await findNearMiss(v, req.oldString, req.replaceAll, budgets.nearMiss);
  if (near) return nearMissError(t, v, req, near);
  const { lines: old, total } = oldLines(lfOnly(req.oldString));
  const idx = new LineIndex(v.doc.lines, v.doc.joined);
  const found = await nearestRegion(idx, old, 0, budgets.region);
  const cuts = searchCuts(req.oldString.length, nearCut, found.cut);
  const note = cutNote(cuts, 'old_string', req.oldString.length);
  if (!found.region) {
    return new ToolError(
      'EDIT_NOT_FOUND',
      `${t.rel}: old_string was not found, and no similar region ${cuts.length ? 'was found' : 'exists in the file'}${note}`,
      cuts.length ? { path: t.rel, search_cut: cuts } : { path: t.rel },
      {
        retry: `read_file ${JSON.stringify({ path: t.rel })}`,
        suggestion: 'Re-read the file and copy old_string from its current text.',
      },
    );
  }
  return regionError(t, found.region, total, cuts, note);
}

/**
 * The lines of old_string the searches may compare (those in its first 2 × MAX_COMPARED_CHARS characters: they
 * compare at most half of that) and how many lines it has, without splitting megabytes into lines.
 */
function oldLines(text: string): { lines: string[]; total: number } {
  const lines = text.slice(0, 2 * MAX_COMPARED_CHARS).split('\n');
  let total = 1;
  for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) total++;
  if (total > 1 && text.endsWith('\n')) {
    total--;
    if (lines.length === total + 1) lines.pop();
  }
  return { lines, total };
}

function regionError(t: Target, region: Region, oldLines: number, cuts: readonly SearchCut[], note: string) {
  const start = region.start + 1;
  const of = region.compared < oldLines ? `of the first ${region.compared} of ${oldLines}` : `of ${oldLines}`;
  const details: Record<string, unknown> = {
    path: t.rel,
    nearest: { start_line: start, equal_lines: region.equal, lines: region.lines },
  };
  if (cuts.length) details.search_cut = cuts;
  return new ToolError(
    'EDIT_NOT_FOUND',
    `${t.rel}: old_string was not found; the most similar region starts at line ${start} (${region.equal} ${of} lines equal)${note}`,
    details,
    {
      retry: `read_file ${JSON.stringify({ path: t.rel, start_line: Math.max(1, start - 2), end_line: start + (cuts.length ? region.lines.length : oldLines) + 2 })}`,
      suggestion: "Re-read those lines and copy old_string from the file's current text.",
    },
  );
}

function nearMissError(t: Target, v: EditView, req: EditRequest, near: NearMiss): ToolError {
  const lines = lineList(v, near.starts);
  const where = listed(lines, near.starts.length);
  const what = NEAR_MISS_NAMES[near.kind];
  if (near.candidate !== undefined) {
    const args: Record<string, unknown> = {
      path: req.path,
      old_string: near.candidate,
      new_string: req.newString,
    };
    if (req.replaceAll) args.replace_all = true;
    return new ToolError(
      'EDIT_NOT_FOUND',
      `${t.rel}: old_string was not found; the text at ${where} differs from it only in ${what}`,
      { path: t.rel, near_miss: near.kind, line: lines[0], next_action: { tool: TOOL, arguments: args } },
      {
        retry: `${TOOL} ${JSON.stringify(args)}`,
        suggestion:
          "That retry uses the file's own text as old_string; adjust new_string's whitespace too if needed.",
      },
    );
  }
  return new ToolError(
    'EDIT_NOT_FOUND',
    `${t.rel}: old_string was not found; ignoring ${what}, it occurs at ${where}`,
    { path: t.rel, near_miss: near.kind, match_lines: lines },
    {
      retry: `read_file ${JSON.stringify({ path: t.rel, start_line: lines[0], end_line: (lines[0] as number) + countLines(req.oldString) })}`,
      suggestion:
        "Copy old_string from the file's current text, with enough surrounding lines to occur once.",
    },
  );
}

/** The committer speaks of patches; a conflict under edit_file names the call to repeat. */
function conflictAsEdit(e: unknown): unknown {
  if (!(e instanceof ToolError) || e.code !== 'PATCH_CONFLICT') return e;
  return new ToolError(
    e.code,
    e.message.replace('while the patch was being applied', 'while it was being edited'),
    e.details,
    {
      suggestion:
        'Send the same edit_file call again: it is matched against the current content. Re-read the file first if the change was not yours.',
    },
  );
}
