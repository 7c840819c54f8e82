// Parser for `git status --porcelain=v2 -z --branch`: branch headers, ordinary (1), renamed/copied (2),
// unmerged (u), untracked (?) and ignored (!) records. Pure: bytes in, values out; paths stay as git printed
// them (relative to the work tree's top). A record cut off by an output bound is dropped and reported.

export interface StatusBranch {
  /** Commit id, or null on an unborn branch (`(initial)`). */
  oid: string | null;
  /** Branch name, or null when HEAD is detached. */
  head: string | null;
  upstream: string | null;
  ahead: number | null;
  behind: number | null;
}

export type StatusKind = 'changed' | 'renamed' | 'copied' | 'unmerged' | 'untracked' | 'ignored';

export interface StatusEntry {
  kind: StatusKind;
  path: string;
  /** Source of a rename or copy. */
  origPath?: string;
  /** Index (staged) status letter; `.` = unmodified, `?` untracked, `!` ignored. */
  x: string;
  /** Worktree (unstaged) status letter. */
  y: string;
  /** Rename/copy similarity, e.g. 100. */
  score?: number;
  /** The entry is a submodule (`S…` field). */
  submodule: boolean;
}

export interface ParsedStatus {
  branch: StatusBranch | null;
  entries: StatusEntry[];
  /** The last record was incomplete (output bound) and was dropped. */
  cut: boolean;
}

/** Splits `s` after `n` space-separated fields; the rest (a path, which may hold spaces) is the last item. */
function fields(s: string, n: number): string[] | null {
  const out: string[] = [];
  let pos = 0;
  for (let i = 0; i < n; i++) {
    const sp = s.indexOf(' ', pos);
    if (sp < 0) return null;
    out.push(s.slice(pos, sp));
    pos = sp + 1;
  }
  out.push(s.slice(pos));
  return out;
}

function branchHeader(branch: StatusBranch, line: string): void {
  const [key, ...rest] = line.slice(2).split(' ');
  const value = rest.join(' ');
  switch (key) {
    case 'branch.oid':
      branch.oid = value === '(initial)' ? null : value;
      break;
    case 'branch.head':
      branch.head = value === '(detached)' ? null : value;
      break;
    case 'branch.upstream':
      branch.upstream = value;
      break;
    case 'branch.ab': {
      const m = /^\+(\d+) -(\d+)$/.exec(value);
      if (m) {
        branch.ahead = Number(m[1]);
        branch.behind = Number(m[2]);
      }
      break;
    }
  }
}

export function parseStatusV2(out: Buffer | string, complete = true): ParsedStatus {
  const recs = (typeof out === 'string' ? out : out.toString('utf8')).split('\0');
  // A complete output ends with NUL, so the last item is empty; otherwise it is a partial record.
  let cut = false;
  const last = recs.pop();
  if (last !== '' && last !== undefined) cut = true;
  if (!complete) cut = true;
  let branch: StatusBranch | null = null;
  const entries: StatusEntry[] = [];
  for (let i = 0; i < recs.length; i++) {
    const rec = recs[i] as string;
    if (rec === '') continue;
    const tag = rec[0];
    if (tag === '#') {
      branch ??= { oid: null, head: null, upstream: null, ahead: null, behind: null };
      branchHeader(branch, rec);
    } else if (tag === '1') {
      const f = fields(rec, 8);
      if (!f) continue;
      entries.push({ kind: 'changed', x: f[1]![0]!, y: f[1]![1]!, path: f[8]!, submodule: f[2]![0] === 'S' });
    } else if (tag === '2') {
      const f = fields(rec, 9);
      // The source path is the next NUL-separated item; when the bound cut it off, drop the record.
      if (!f || i + 1 >= recs.length) {
        cut = true;
        continue;
      }
      const origPath = recs[++i] as string;
      const score = f[8]!;
      entries.push({
        kind: score[0] === 'C' ? 'copied' : 'renamed',
        x: f[1]![0]!,
        y: f[1]![1]!,
        path: f[9]!,
        origPath,
        score: Number(score.slice(1)),
        submodule: f[2]![0] === 'S',
      });
    } else if (tag === 'u') {
      const f = fields(rec, 10);
      if (!f) continue;
      entries.push({
        kind: 'unmerged',
        x: f[1]![0]!,
        y: f[1]![1]!,
        path: f[10]!,
        submodule: f[2]![0] === 'S',
      });
    } else if (tag === '?' || tag === '!') {
      entries.push({
        kind: tag === '?' ? 'untracked' : 'ignored',
        x: tag,
        y: tag,
        path: rec.slice(2),
        submodule: false,
      });
    }
  }
  return { branch, entries, cut };
}

/** The two-letter short-format code a model knows from `git status -s` (`M `, ` M`, `R `, `UU`, `??`). */
export function shortCode(e: StatusEntry): string {
  const c = (ch: string) => (ch === '.' ? ' ' : ch);
  return c(e.x) + c(e.y);
}
