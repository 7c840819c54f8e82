// The full patch of a show_changes result for an MCP Apps host (docs/tools.md#review-points): the CallToolResult's
// `_meta` under DIFF_META_KEY, computed only when the client renders apps (ToolContext.ui). Each file's
// hunks (unified diff text from its first `@@`), at most MAX_META_HUNK_BYTES of them from `offset` on; a file
// whose hunks do not fit carries `cut: true`, and `cut.next` is the exact call that returns the rest.
import type { Comparison, ReviewPoints } from '../../git/review-points.js';
import type { TreeChange } from '../../git/review-repo.js';

export { DIFF_META_KEY } from '../apps.js';
export const MAX_META_HUNK_BYTES = 256 * 1024;
/** The most patch text git is asked for at once (the rest of a larger diff is not offered). */
const MAX_PATCH_BYTES = 16 * 1024 * 1024;

export interface MetaFile {
  path: string;
  status: TreeChange['status'];
  from?: string;
  added: number;
  removed: number;
  binary?: true;
  hunks: string;
  cut?: true;
}

export interface DiffMeta {
  point: string;
  since: string;
  files: MetaFile[];
  cut?: {
    shownBytes: number;
    totalBytes: number;
    next: { name: 'show_changes'; arguments: { since: string; point?: string; offset: number } };
  };
}

/** The longest prefix of `b` of at most `max` bytes that ends at a line end (or a UTF-8 boundary). */
function cutAt(b: Buffer, max: number): number {
  if (b.length <= max) return b.length;
  const nl = b.lastIndexOf(0x0a, max - 1) + 1;
  if (nl > 0) return nl;
  let n = max;
  while (n > 0 && ((b[n] as number) & 0xc0) === 0x80) n--;
  return n;
}

/** The `_meta` value for comparison `c`, its hunks from byte `offset` of all of them (in file order). */
export async function diffMeta(reviews: ReviewPoints, c: Comparison, offset = 0): Promise<DiffMeta> {
  const { byPath, cut: patchCut } = c.files.length
    ? await reviews.hunks(c, MAX_PATCH_BYTES)
    : { byPath: new Map<string, string>(), cut: false };
  const files: MetaFile[] = [];
  let pos = 0;
  let room = MAX_META_HUNK_BYTES;
  let shownEnd = offset;
  let more = patchCut;
  for (const f of c.files) {
    const text = Buffer.from(byPath.get(f.path) ?? '');
    const start = pos;
    pos += text.length;
    if (pos <= offset && text.length > 0) continue; // shown by an earlier call
    if (room <= 0 && text.length > 0) {
      more = true;
      continue;
    }
    const from = Math.max(0, offset - start);
    const part = text.subarray(from);
    const n = cutAt(part, room);
    room -= n;
    if (n > 0) shownEnd = start + from + n;
    const cut = n < part.length || (patchCut && !byPath.has(f.path));
    if (cut) more = true;
    files.push({
      path: f.path,
      status: f.status,
      ...(f.from !== undefined ? { from: f.from } : {}),
      added: f.added ?? 0,
      removed: f.removed ?? 0,
      ...(f.added === null ? { binary: true as const } : {}),
      hunks: part.subarray(0, n).toString('utf8'),
      ...(cut ? { cut: true as const } : {}),
    });
  }
  const meta: DiffMeta = { point: c.point, since: c.since, files };
  if (more) {
    const point = c.point === 'now' ? {} : { point: c.point };
    meta.cut = {
      shownBytes: shownEnd - offset,
      totalBytes: pos,
      next: { name: 'show_changes', arguments: { since: c.since, ...point, offset: shownEnd } },
    };
  }
  return meta;
}
