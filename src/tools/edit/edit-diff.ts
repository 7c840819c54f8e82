// The review card's data for apply_patch and edit_file (docs/review-card.md#data): for a client that declared
// MCP Apps, the result's `_meta` carries the edit's own patch (tools/apps.ts DIFF_META_KEY), built from the
// bytes the engine committed. Computed only then: the engine's after-commit hook keeps the steps, nothing more.
import { unifiedHunks } from '../../git/line-diff.js';
import type { CommitStep } from '../../patch/commit.js';
import { DIFF_META_KEY } from '../apps.js';

/**
 * The most hunk text one result carries: the file that passes it keeps its first whole lines that fit and
 * `cut: true`, the files after it `cut: true` and no hunks.
 */
export const MAX_HUNK_BYTES = 256 * 1024;
/** Context lines around each change, as git prints them. */
const CONTEXT = 3;

type Hook = (steps: readonly CommitStep[]) => void;

export interface DiffFile {
  path: string;
  status: 'added' | 'modified' | 'deleted' | 'renamed';
  from?: string;
  added: number;
  removed: number;
  binary?: true;
  hunks: string;
  cut?: true;
}

export interface Affected {
  path: string;
  operation: 'add' | 'update' | 'delete' | 'move';
  old_path?: string;
}

/** The engine's after-commit hook: `hook` (the console's journal, when on) and, when `ui`, the steps kept. */
export function keepSteps(
  hook: Hook | undefined,
  ui: boolean | undefined,
): { committed?: Hook; kept: CommitStep[] } {
  const kept: CommitStep[] = [];
  if (!ui) return hook ? { committed: hook, kept } : { kept };
  return {
    committed: (steps) => {
      kept.push(...steps);
      hook?.(steps);
    },
    kept,
  };
}

/** The result's `_meta` for the card, or undefined when nothing was committed (a dry run, a client without it). */
export function editDiffMeta(
  affected: readonly Affected[],
  steps: readonly CommitStep[],
): Record<string, unknown> | undefined {
  if (steps.length === 0) return undefined;
  const byPath = new Map(steps.map((s) => [s.rel, s]));
  let budget = MAX_HUNK_BYTES;
  let total = 0;
  const files = affected.map((a) => {
    const f = diffFile(a, byPath);
    const size = Buffer.byteLength(f.hunks);
    total += size;
    if (size <= budget) {
      budget -= size;
      return f;
    }
    const kept = headOf(f.hunks, budget);
    budget = 0;
    return { ...f, hunks: kept, cut: true as const };
  });
  const shown = files.reduce((n, f) => n + Buffer.byteLength(f.hunks), 0);
  const cut = files.some((f) => f.cut) ? { cut: { shownBytes: shown, totalBytes: total } } : {};
  return { [DIFF_META_KEY]: { files, ...cut } };
}

function diffFile(a: Affected, byPath: ReadonlyMap<string, CommitStep>): DiffFile {
  const step = byPath.get(a.path);
  const before = a.operation === 'move' ? bytesBefore(byPath.get(a.old_path ?? '')) : bytesBefore(step);
  const after = a.operation === 'delete' ? null : bytesAfter(step);
  const status = STATUS[a.operation];
  const head = { path: a.path, status, ...(a.old_path ? { from: a.old_path } : {}) };
  if (isBinary(before) || isBinary(after)) return { ...head, added: 0, removed: 0, binary: true, hunks: '' };
  const hunks = unifiedHunks(before?.toString('utf8') ?? '', after?.toString('utf8') ?? '', CONTEXT);
  const { added, removed } = countLines(hunks);
  return { ...head, added, removed, hunks };
}

/** The whole lines of `hunks` that fit in `bytes`. */
function headOf(hunks: string, bytes: number): string {
  const head = Buffer.from(hunks).subarray(0, bytes).toString('utf8');
  const end = head.lastIndexOf('\n');
  return end < 0 ? '' : head.slice(0, end + 1);
}

const STATUS = { add: 'added', update: 'modified', delete: 'deleted', move: 'renamed' } as const;

function bytesBefore(s: CommitStep | undefined): Buffer | null {
  return s && s.kind !== 'create' ? s.baseline.bytes : null;
}

function bytesAfter(s: CommitStep | undefined): Buffer | null {
  return s && s.kind !== 'remove' ? s.content : null;
}

/** As git decides: a NUL byte in the first 8,000. */
function isBinary(b: Buffer | null): boolean {
  return b !== null && b.subarray(0, 8000).includes(0);
}

export function countLines(hunks: string): { added: number; removed: number } {
  let added = 0;
  let removed = 0;
  for (const line of hunks.split('\n')) {
    if (line.startsWith('+')) added++;
    else if (line.startsWith('-')) removed++;
  }
  return { added, removed };
}
