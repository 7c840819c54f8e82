// The review points of a workspace that is not a git repository (docs/tools.md#review-points): a snapshot is the
// list of its files (.gitignore and the default excludes honoured, as list_files) with the sha-256 of each,
// their bytes kept once per content under the private directory in the runtime directory. Files are read
// through the workspace layer (confined-fs: no last-component symlink followed, the descriptor checked inside
// the workspace), so a command swapping a file for a link mid-walk gets it skipped, never followed out. Bounded:
// past MAX_SNAPSHOT_FILES files or MAX_SNAPSHOT_BYTES bytes the answer is REVIEW_TOO_LARGE. Renames are found
// by identical content.
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ToolError } from '../core/tool-error.js';
import { readRegularVerified } from '../workspace/confined-fs.js';
import type { WorkspaceRoot } from '../workspace/paths.js';
import { walk } from '../workspace/walk.js';
import { diffLines, splitLines, unifiedHunks } from './line-diff.js';
import type { TreeChange } from './review-repo.js';

export const MAX_SNAPSHOT_FILES = 5000;
export const MAX_SNAPSHOT_BYTES = 64 * 1024 * 1024;

interface PlainFile {
  hash: string;
  size: number;
  mode: number;
}
type Tree = Map<string, PlainFile>;

const EMPTY: Tree = new Map();

export class PlainReview {
  private readonly trees = new Map<string, Tree>();
  /** The hash of each file as last read, by its identity (ino, size, times): an unchanged file is not read again. */
  private known = new Map<string, { sig: string; hash: string }>();
  private seq = 0;

  constructor(
    private readonly root: WorkspaceRoot,
    /** Where the contents are kept (a directory of the runtime directory). */
    readonly dir: string,
  ) {}

  /** The empty snapshot: what the first point of a plain directory is compared against (nothing). */
  empty(): string {
    this.trees.set('empty', EMPTY);
    return 'empty';
  }

  /** A snapshot of the workspace now; its handle. */
  async snapshot(): Promise<string> {
    mkdirSync(path.join(this.dir, 'blobs'), { recursive: true, mode: 0o700 });
    const tree: Tree = new Map();
    const known = new Map<string, { sig: string; hash: string }>();
    let bytes = 0;
    const start = { abs: this.root.lexical, real: this.root.real, rel: '.' };
    await walk(this.root, start, { includeHidden: true }, (e) => {
      if (e.type !== 'file' || !e.stat) return;
      const st = e.stat;
      if (tree.size >= MAX_SNAPSHOT_FILES || bytes + st.size > MAX_SNAPSHOT_BYTES) throw tooLarge();
      const sig = `${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`;
      let hash = this.known.get(e.rel)?.sig === sig ? this.known.get(e.rel)?.hash : undefined;
      if (!hash) {
        const buf = readRegularVerified(this.root.real, path.join(this.root.real, e.rel));
        if (!buf) return; // swapped or unreadable: not part of this snapshot
        hash = this.store(buf);
      }
      known.set(e.rel, { sig, hash });
      bytes += st.size;
      tree.set(e.rel, { hash, size: st.size, mode: st.mode & 0o111 ? 0o755 : 0o644 });
    });
    this.known = known;
    const handle = `s${++this.seq}`;
    this.trees.set(handle, tree);
    return handle;
  }

  /** Forgets a snapshot that became no point (the tree of "now" for a comparison). */
  drop(handle: string): void {
    if (handle !== 'empty') this.trees.delete(handle);
  }

  private store(buf: Buffer): string {
    const hash = createHash('sha256').update(buf).digest('hex');
    try {
      writeFileSync(path.join(this.dir, 'blobs', hash), buf, { flag: 'wx', mode: 0o600 });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
    return hash;
  }

  private blob(hash: string): Buffer {
    return readFileSync(path.join(this.dir, 'blobs', hash));
  }

  private tree(handle: string): Tree {
    const t = this.trees.get(handle);
    if (!t) throw new Error(`snapshot ${handle} is gone`);
    return t;
  }

  /** What changed from snapshot `a` to `b`; a deleted file whose content reappears elsewhere is a rename. */
  changes(a: string, b: string, renames = true): TreeChange[] {
    const ta = this.tree(a);
    const tb = this.tree(b);
    const gone = [...ta].filter(([p]) => !tb.has(p));
    const byHash = new Map(gone.map(([p, f]) => [f.hash, p]));
    const out: TreeChange[] = [];
    const renamed = new Set<string>();
    for (const [p, f] of tb) {
      const old = ta.get(p);
      if (old && old.hash === f.hash && old.mode === f.mode) continue;
      const from = !old && renames ? byHash.get(f.hash) : undefined;
      if (from !== undefined && !renamed.has(from)) {
        renamed.add(from);
        out.push({ path: p, from, status: 'renamed', added: 0, removed: 0 });
        continue;
      }
      out.push({ path: p, status: old ? 'modified' : 'added', ...this.counts(old?.hash, f.hash) });
    }
    for (const [p, f] of gone)
      if (!renamed.has(p)) out.push({ path: p, status: 'deleted', ...this.counts(f.hash, undefined) });
    return out.sort((x, y) => (x.path < y.path ? -1 : x.path > y.path ? 1 : 0));
  }

  private counts(
    a: string | undefined,
    b: string | undefined,
  ): { added: number | null; removed: number | null } {
    const ba = a ? this.blob(a) : Buffer.alloc(0);
    const bb = b ? this.blob(b) : Buffer.alloc(0);
    if (isBinary(ba) || isBinary(bb)) return { added: null, removed: null };
    let added = 0;
    let removed = 0;
    for (const o of diffLines(splitLines(ba.toString('utf8')), splitLines(bb.toString('utf8'))))
      if (o.op === '+') added++;
      else if (o.op === '-') removed++;
    return { added, removed };
  }

  /** The hunks of one change (unified, 3 lines of context); '' for a binary file or a pure rename. */
  hunks(a: string, b: string, c: TreeChange): string {
    const before = this.tree(a).get(c.from ?? c.path);
    const after = this.tree(b).get(c.path);
    const ba = before ? this.blob(before.hash) : Buffer.alloc(0);
    const bb = after ? this.blob(after.hash) : Buffer.alloc(0);
    if (isBinary(ba) || isBinary(bb)) return '';
    return unifiedHunks(ba.toString('utf8'), bb.toString('utf8'), 3);
  }

  /** Each path's bytes and mode in snapshot `at`, or null when it has none there. */
  filesAt(at: string, paths: string[]): Map<string, { bytes: Buffer; mode: number } | null> {
    const t = this.tree(at);
    return new Map(
      paths.map((p) => {
        const f = t.get(p);
        return [p, f ? { bytes: this.blob(f.hash), mode: f.mode } : null];
      }),
    );
  }
}

function isBinary(b: Buffer): boolean {
  return b.subarray(0, 8000).includes(0);
}

function tooLarge(): ToolError {
  return new ToolError(
    'REVIEW_TOO_LARGE',
    `the workspace is not a git repository and has more than ${MAX_SNAPSHOT_FILES} files or ` +
      `${MAX_SNAPSHOT_BYTES / 1024 / 1024} MiB outside ignored paths, more than show_changes keeps a snapshot of`,
    { max_files: MAX_SNAPSHOT_FILES, max_bytes: MAX_SNAPSHOT_BYTES },
    {
      suggestion:
        'Run `git init` (and commit) in the workspace so show_changes uses git, list large generated folders in ' +
        '.gitignore, or serve a narrower workspace.',
    },
  );
}
