// Log records: one `--format` of NUL-separated fields, printed with `-z` (NUL between commits), so every field
// and every record ends in NUL and a commit is exactly LOG_FIELDS.length items. A commit message cannot hold a
// NUL (git refuses one), so the split is exact. Pure; a record cut by an output bound is dropped.

/** Placeholders in order; no signature placeholder (%G…), which would run gpg. */
export const LOG_FIELDS = ['%H', '%P', '%an', '%ae', '%aI', '%cn', '%ce', '%cI', '%D', '%s', '%b'] as const;
export const LOG_FORMAT = LOG_FIELDS.join('%x00');

export const MAX_BODY_CHARS = 4000;

export interface Person {
  name: string;
  email: string;
  date: string;
}

export interface LogCommit {
  sha: string;
  parents: string[];
  author: Person;
  committer: Person;
  /** Decorations: `HEAD -> main, tag: v1, origin/main`, split. */
  refs: string[];
  subject: string;
  body: string;
  body_truncated: boolean;
}

function commitFrom(f: string[]): LogCommit {
  const body = (f[10] ?? '').replace(/\n+$/, '');
  return {
    sha: f[0]!,
    parents: f[1] ? f[1].split(' ') : [],
    author: { name: f[2]!, email: f[3]!, date: f[4]! },
    committer: { name: f[5]!, email: f[6]!, date: f[7]! },
    refs: f[8] ? f[8].split(', ') : [],
    subject: f[9]!,
    body: body.length > MAX_BODY_CHARS ? body.slice(0, MAX_BODY_CHARS) : body,
    body_truncated: body.length > MAX_BODY_CHARS,
  };
}

/**
 * Parses `git log -z --format=LOG_FORMAT` (every field NUL-terminated). `git show -z --format=LOG_FORMAT`
 * prints one record the same way, and then its diff output: `rest` is the offset where that begins.
 */
export function parseLog(
  out: Buffer | string,
  max = Infinity,
): { commits: LogCommit[]; rest: number; cut: boolean } {
  const s = typeof out === 'string' ? out : out.toString('utf8');
  const n = LOG_FIELDS.length;
  const commits: LogCommit[] = [];
  let pos = 0;
  while (pos < s.length && commits.length < max) {
    const f: string[] = [];
    let p = pos;
    for (let i = 0; i < n; i++) {
      const nul = s.indexOf('\0', p);
      if (nul < 0) return { commits, rest: pos, cut: true };
      f.push(s.slice(p, nul));
      p = nul + 1;
    }
    commits.push(commitFrom(f));
    pos = p;
  }
  return { commits, rest: pos, cut: false };
}
