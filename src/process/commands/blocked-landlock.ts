// The `blocked` note for a write the Landlock sandbox refused (blocked.ts; sandbox-landlock.ts). Landlock
// answers "Permission denied" (EACCES), not bubblewrap's "Read-only file system" — and EACCES has many other
// causes. So the note is given only when the message names an absolute path, that path lies outside the
// command's writable roots, and the server's own user could have written there (the file, or the nearest
// existing directory above a new one): then only the sandbox can have said no. Otherwise nothing is said.
import { accessSync, constants, statSync } from 'node:fs';
import path from 'node:path';

/** A note as blocked.ts's BlockedNote (not imported: blocked.ts imports this module). */
export interface WriteNote {
  what: string;
  why: string;
  next: string;
}

/** The forms programs print a refused path in: coreutils, sh/bash/dash, Python, Node. */
const DENIED = [
  /['‘"](\/[^'’"\n]+)['’"]:? Permission denied/,
  /(?:^|[\s:])(\/[^\s:'"]+): Permission denied/m,
  /Permission denied: ['"](\/[^'"\n]+)['"]/,
  /EACCES: permission denied, \w+ '(\/[^'\n]+)'/,
];
/** How far up a new file's path the nearest existing directory is looked for. */
const MAX_UP = 16;

/** The refused path a chunk of error output names, if any. */
export function deniedPath(chunk: string): string | undefined {
  if (!/Permission denied|permission denied/.test(chunk)) return undefined;
  for (const re of DENIED) {
    const m = re.exec(chunk);
    if (m?.[1]) return path.normalize(m[1]);
  }
  return undefined;
}

/** The note for a refused write in the Landlock sandbox, or undefined when the sandbox is not the cause. */
export function landlockWriteNote(chunk: string, writable: readonly string[]): WriteNote | undefined {
  const p = deniedPath(chunk);
  if (!p || writable.some((w) => p === w || p.startsWith(`${w}/`))) return undefined;
  if (!serverCouldWrite(p)) return undefined;
  return {
    what: p.length > 60 ? `${p.slice(0, 59)}…` : p,
    why: 'the Landlock sandbox lets commands write only in the workspace, $HOME and $TMPDIR',
    next: 'write in the workspace or $TMPDIR',
  };
}

/** Whether this process may write `p` (or create it in the nearest existing directory above it). */
function serverCouldWrite(p: string): boolean {
  let at = p;
  for (let i = 0; i < MAX_UP; i++) {
    try {
      accessSync(at, constants.W_OK);
      return at === p || statSync(at).isDirectory();
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') return false;
    }
    const up = path.dirname(at);
    if (up === at) return false;
    at = up;
  }
  return false;
}
