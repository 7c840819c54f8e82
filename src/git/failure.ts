// git/failure: why a git process failed, read from its exit and its stderr in this one place, as a closed
// union the tools map to their ToolErrors (docs/architecture.md#style, rule 4). git's messages are English
// because every git process runs with LANG=C.UTF-8 (git/run.ts gitEnv); the first pattern that matches wins,
// in the order of FAILURES.
import type { ArgvResult } from '../process/jail/argv.js';

export type GitFailure =
  /** Stopped at GIT_TIMEOUT_MS (git/run.ts). */
  | { kind: 'timeout' }
  /** The repository belongs to another user (safe.directory). */
  | { kind: 'dubious_ownership' }
  /** `git blame -L` past the end: the file has `totalLines` lines. */
  | { kind: 'past_end'; totalLines: number }
  /** A repository whose branch has no commit yet. */
  | { kind: 'no_commits' }
  /** `git blame`: the path is not in the revision (or, without one, not in HEAD). */
  | { kind: 'no_such_path' }
  /** `git cat-file`: a `rev:path` whose path is not in that revision. */
  | { kind: 'path_not_in_rev' }
  /** A revision git cannot resolve; `mentionsHead` when the message names HEAD (an unborn branch). */
  | { kind: 'unknown_revision'; mentionsHead: boolean }
  /** Discovery (`git rev-parse`) found no repository under the ceiling. */
  | { kind: 'not_repository' }
  /** Discovery ran inside a git directory or a bare repository. */
  | { kind: 'not_work_tree' }
  | { kind: 'other' };

const UNKNOWN_REV =
  /unknown revision|bad revision|not a valid object name|invalid object name|ambiguous argument|bad object|no such ref|not a valid (tag|commit)|needed a single revision/i;

/** Each kind read from stderr alone, in the order they are tried. */
const FAILURES: ReadonlyArray<(stderr: string) => GitFailure | null> = [
  // First: when git distrusts the repository's owner, nothing else it says is the cause.
  (s) => (/dubious ownership/i.test(s) ? { kind: 'dubious_ownership' } : null),
  (s) => {
    const only = /has only (\d+) lines?/.exec(s);
    return only ? { kind: 'past_end', totalLines: Number(only[1]) } : null;
  },
  (s) => (/does not have any commits yet/i.test(s) ? { kind: 'no_commits' } : null),
  (s) => (/no such path/i.test(s) ? { kind: 'no_such_path' } : null),
  (s) => (UNKNOWN_REV.test(s) ? { kind: 'unknown_revision', mentionsHead: /HEAD/.test(s) } : null),
  (s) => (/does not exist|exists on disk, but not in/i.test(s) ? { kind: 'path_not_in_rev' } : null),
  (s) => (/not a git repository/i.test(s) ? { kind: 'not_repository' } : null),
  (s) => (/must be run in a work tree/i.test(s) ? { kind: 'not_work_tree' } : null),
];

/** Why the git process `r` (which did not succeed) failed. */
export function classifyGitFailure(r: Pick<ArgvResult, 'timedOut' | 'stderr'>): GitFailure {
  if (r.timedOut) return { kind: 'timeout' };
  for (const read of FAILURES) {
    const f = read(r.stderr);
    if (f) return f;
  }
  return { kind: 'other' };
}

/** A revision or object git could not find (either way the model should pick another revision). */
export function isMissingRevision(f: GitFailure): boolean {
  return f.kind === 'unknown_revision' || f.kind === 'path_not_in_rev';
}
