// The review points of the workspace (docs/tools.md#review-points): show_changes takes one (what changed since
// the last point, then the point moves to now), or compares an earlier point with now or with another point
// without moving anything. A git work tree at the workspace root keeps them as commits of a private repository
// (review-repo.ts), any other workspace as snapshots (review-plain.ts). Calls are serialised: the private index
// and the snapshot cache are one per workspace. Points live as long as the runtime directory (one server run).
import path from 'node:path';
import type { Clock } from '../core/clock.js';
import { Feed } from '../core/feed.js';
import { randomHex } from '../core/random.js';
import { ToolError } from '../core/tool-error.js';
import { splitPatch } from './parse-diff.js';
import { openRepo } from './repo.js';
import { PlainReview } from './review-plain.js';
import { ReviewRepo, unknownPoint, type TreeChange } from './review-repo.js';
import type { GitHost } from './run.js';

/** What the review points need of the server: git's host, the clock, and the runtime directory. */
export interface ReviewHost extends GitHost {
  readonly clock: Clock;
  readonly dirs: { readonly root: string; readonly home: string };
}

export interface ReviewPoint {
  id: string;
  time: number;
  /** The point it was compared against when it was made ('HEAD' or nothing for the first). */
  since: string;
  /** What changed from `since` to this point. */
  files: TreeChange[];
  /** The backend's handle: a commit id (git) or a snapshot handle. */
  handle: string;
  /** git: the tree id, to tell "nothing new" cheaply. */
  tree?: string;
  /** The handle it was compared against when made (the first point's HEAD, for `since: "HEAD"`). */
  base: string;
}

export interface Comparison {
  point: string;
  since: string;
  files: TreeChange[];
  /** The first point: compared against HEAD (git) or nothing (a plain directory). */
  first?: 'HEAD' | 'nothing';
  /** The handles compared (for the hunks of diffMeta). */
  from: string;
  to: string;
}

/** What to write to restore a point: each file's content there (null: absent) and what it holds now. */
export interface RevertPlan {
  files: Array<{ rel: string; content: Buffer | null; mode: number; expect: Buffer | null }>;
}

type Backend = { kind: 'git'; git: ReviewRepo } | { kind: 'plain'; plain: PlainReview };

export class ReviewPoints {
  private readonly points: ReviewPoint[] = [];
  private backend: Backend | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  private readonly tag = randomHex(2);
  /** Without git: the snapshot of the last comparison with now (its hunks may still be asked for). */
  private lastNow: string | undefined;
  /** Each new point, for the console. */
  readonly feed = new Feed<ReviewPoint>(20);

  constructor(private readonly host: ReviewHost) {}

  /** The private directory (absent from every command sandbox with the rest of the runtime directory). */
  get dir(): string {
    return path.join(this.host.dirs.root, 'review');
  }

  /** Newest first. */
  list(): readonly ReviewPoint[] {
    return [...this.points].reverse();
  }

  get(id: string): ReviewPoint {
    const p = this.points.find((x) => x.id === id);
    if (!p)
      throw unknownPoint(
        id,
        this.points.map((x) => x.id),
      );
    return p;
  }

  private serial<T>(f: () => Promise<T>): Promise<T> {
    const run = this.queue.then(f, f);
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async open(): Promise<Backend> {
    if (this.backend) return this.backend;
    let found;
    try {
      found = await openRepo(this.host, this.host.root.real);
    } catch (e) {
      if (!(e instanceof ToolError)) throw e;
      found = null; // inside a larger repository: the workspace is reviewed as a plain directory
    }
    this.backend =
      found?.kind === 'repo' && found.repo.top === this.host.root.real
        ? { kind: 'git', git: new ReviewRepo(this.host, found.repo, path.join(this.dir, 'git')) }
        : { kind: 'plain', plain: new PlainReview(this.host.root, path.join(this.dir, 'plain')) };
    return this.backend;
  }

  /** What changed since the last point (HEAD or nothing for the first), then a new point at now. */
  take(): Promise<Comparison> {
    return this.serial(async () => {
      const b = await this.open();
      const last = this.points[this.points.length - 1];
      const first = last ? undefined : b.kind === 'git' ? ('HEAD' as const) : ('nothing' as const);
      const base = last?.handle ?? (b.kind === 'git' ? await b.git.headOrEmpty() : b.plain.empty());
      if (b.kind === 'git') {
        const tree = await b.git.snapshotTree(base);
        if (last && last.tree === tree)
          return { point: last.id, since: last.id, files: [], from: base, to: base };
        const id = this.nextId();
        const commit = b.git.keep(id, tree, last?.handle ?? null, this.host.clock.now());
        const files = await b.git.changes(base, commit);
        return this.remember({ id, handle: commit, tree, since: last?.id ?? 'HEAD', files }, base, first);
      }
      const snap = await b.plain.snapshot();
      const files = last ? b.plain.changes(base, snap) : [];
      if (last && files.length === 0) {
        b.plain.drop(snap);
        return { point: last.id, since: last.id, files: [], from: base, to: base };
      }
      return this.remember({ id: this.nextId(), handle: snap, since: last?.id ?? '', files }, base, first);
    });
  }

  private remember(
    p: Omit<ReviewPoint, 'time' | 'base'>,
    base: string,
    first?: Comparison['first'],
  ): Comparison {
    const point: ReviewPoint = { ...p, base, time: this.host.clock.now() };
    this.points.push(point);
    this.feed.publish(point);
    return {
      point: p.id,
      since: p.since,
      files: p.files,
      from: base,
      to: p.handle,
      ...(first ? { first } : {}),
    };
  }

  private nextId(): string {
    return `r${this.points.length + 1}-${this.tag}`;
  }

  /**
   * `since` compared with `point` (or with now); nothing moves. `since: "HEAD"` is what the first point was
   * compared against (the HEAD of that moment).
   */
  compare(since: string, point?: string): Promise<Comparison> {
    return this.serial(async () => {
      const first = this.points[0];
      const from = since === 'HEAD' && first?.since === 'HEAD' ? first.base : this.get(since).handle;
      const b = await this.open();
      const to = point !== undefined ? this.get(point).handle : await this.now(b);
      const files = b.kind === 'git' ? await b.git.changes(from, to) : b.plain.changes(from, to);
      return { point: point ?? 'now', since, files, from, to };
    });
  }

  /** A handle of the working tree now, kept as no point (without git, only the latest such snapshot is kept). */
  private async now(b: Backend): Promise<string> {
    if (b.kind === 'plain') {
      if (this.lastNow) b.plain.drop(this.lastNow);
      return (this.lastNow = await b.plain.snapshot());
    }
    const last = this.points[this.points.length - 1];
    return b.git.snapshotTree(last?.handle ?? (await b.git.headOrEmpty()));
  }

  /** Each changed file's hunks (unified diff text from its first `@@`) from handle `from` to `to`. */
  async hunks(c: Comparison, maxBytes: number): Promise<{ byPath: Map<string, string>; cut: boolean }> {
    const b = await this.open();
    const byPath = new Map<string, string>();
    if (b.kind === 'plain') {
      for (const f of c.files) byPath.set(f.path, b.plain.hunks(c.from, c.to, f));
      return { byPath, cut: false };
    }
    const patch = await b.git.patch(c.from, c.to, maxBytes);
    for (const s of splitPatch(patch.text)) {
      if (s.path === null) continue;
      const at = s.text.indexOf('\n@@');
      byPath.set(s.path, at < 0 ? '' : s.text.slice(at + 1));
    }
    return { byPath, cut: patch.cut };
  }

  /**
   * What restoring point `id` writes: every file that differs between the point and now, with its content at
   * the point. PATCH_CONFLICT when one of them changed after the last point (work nobody reviewed would be lost).
   */
  revertPlan(id: string): Promise<RevertPlan> {
    return this.serial(async () => {
      const target = this.get(id);
      const last = this.points[this.points.length - 1] as ReviewPoint;
      const b = await this.open();
      const now = await this.now(b);
      const diff = (x: string, y: string) =>
        b.kind === 'git' ? b.git.changes(x, y, false) : Promise.resolve(b.plain.changes(x, y, false));
      const touched = (await diff(target.handle, now)).map((f) => f.path);
      const unreviewed = new Set((await diff(last.handle, now)).map((f) => f.path));
      const lost = touched.filter((p) => unreviewed.has(p));
      if (lost.length) throw unreviewedWork(id, last.id, lost);
      const at =
        b.kind === 'git'
          ? await b.git.filesAt(target.handle, touched)
          : b.plain.filesAt(target.handle, touched);
      const cur = b.kind === 'git' ? await b.git.filesAt(now, touched) : b.plain.filesAt(now, touched);
      return {
        files: touched.map((rel) => ({
          rel,
          content: at.get(rel)?.bytes ?? null,
          mode: at.get(rel)?.mode ?? 0o644,
          expect: cur.get(rel)?.bytes ?? null,
        })),
      };
    });
  }
}

function unreviewedWork(id: string, last: string, paths: string[]): ToolError {
  const shown = paths.slice(0, 10).join(', ') + (paths.length > 10 ? `, … (${paths.length} in all)` : '');
  return new ToolError(
    'PATCH_CONFLICT',
    `reverting to ${id} would overwrite changes made after the last review point ${last} that nobody has ` +
      `reviewed: ${shown}; nothing was written`,
    { point: id, last, paths: paths.slice(0, 100), reason: 'unreviewed_changes' },
    {
      suggestion:
        'Call show_changes to review those changes first (it makes a new review point); then revert again if they should go too.',
    },
  );
}
