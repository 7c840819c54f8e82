// The credentials a state directory keeps (docs/design-notes.md#kept-credentials): the bearer token the server
// generates when none is configured, and the OAuth signing key used when SERVICE_OAUTH_TOKEN_SECRET is unset.
// Each is made once (32 random bytes), then reused by every later start for the same workspace, so a client
// configured once keeps working; `workbench-mcp token rotate` replaces the token, and a running server picks
// the new one up (watchToken) and refuses the old one from then on. A configured variable or flag always wins;
// callers decide that. Nothing here prints a secret.
import { watch } from 'node:fs';
import path from 'node:path';
import { readKept, StateDirError, writeKept, type KeptState } from './state-dir.js';
import { randomBase64url, systemRandom } from '../core/random.js';

export const TOKEN_FILE = 'bearer-token';
export const SIGNING_KEY_FILE = 'oauth-signing-key';
export const GRANTS_FILE = 'oauth-grants.json';

/** The token rules of SERVICE_AUTH_TOKEN (config/load.ts): RFC 6750 b64token, at least 16 characters. */
const TOKEN_SHAPE = /^[A-Za-z0-9\-._~+/]{16,}=*$/;
const KEY_SHAPE = /^(?:[0-9a-f]{2}){32,}$/;

export function keptFile(state: KeptState, name: string): string {
  return path.join(state.dir, name);
}

function newToken(): string {
  return randomBase64url(32);
}

/** The kept bearer token, or undefined when none was made yet. */
export function readToken(state: KeptState): string | undefined {
  const text = readKept(state, TOKEN_FILE);
  if (text === undefined) return undefined;
  const token = text.trim();
  if (!TOKEN_SHAPE.test(token))
    throw new StateDirError(
      `${keptFile(state, TOKEN_FILE)} holds no valid token (at least 16 letters, digits or -._~+/); remove it or run "workbench-mcp token rotate"`,
    );
  return token;
}

/** The kept bearer token, made now when there is none (`created`: print it, this once). */
export function keptToken(state: KeptState): { token: string; created: boolean; file: string } {
  const file = keptFile(state, TOKEN_FILE);
  const existing = readToken(state);
  if (existing !== undefined) return { token: existing, created: false, file };
  const token = newToken();
  if (writeKept(state, TOKEN_FILE, token + '\n', { replace: false })) return { token, created: true, file };
  // Another process made one at the same moment: both use that one.
  const theirs = readToken(state);
  if (theirs === undefined) throw new StateDirError(`${file} vanished while it was being made`);
  return { token: theirs, created: false, file };
}

/** Replaces the kept token with a new one and returns it; a running server accepts only the new one. */
export function rotateToken(state: KeptState): string {
  const token = newToken();
  writeKept(state, TOKEN_FILE, token + '\n', { replace: true });
  return token;
}

/** The kept OAuth signing key (HS256, 32 bytes), made now when there is none. */
export function keptSigningKey(state: KeptState): { key: Buffer; created: boolean; file: string } {
  const file = keptFile(state, SIGNING_KEY_FILE);
  const read = () => {
    const text = readKept(state, SIGNING_KEY_FILE);
    if (text === undefined) return undefined;
    const hex = text.trim().toLowerCase();
    if (!KEY_SHAPE.test(hex))
      throw new StateDirError(
        `${file} holds no valid key (64 or more hex digits); remove it to make a new one`,
      );
    return Buffer.from(hex, 'hex');
  };
  const existing = read();
  if (existing) return { key: existing, created: false, file };
  const key = systemRandom(32);
  if (writeKept(state, SIGNING_KEY_FILE, key.toString('hex') + '\n', { replace: false }))
    return { key, created: true, file };
  const theirs = read();
  if (!theirs) throw new StateDirError(`${file} vanished while it was being made`);
  return { key: theirs, created: false, file };
}

/**
 * Calls `onChange` with the kept token whenever `token rotate` (or anything else) replaces the file, so a
 * running server follows a rotation; a removed or unreadable file changes nothing (`onError` says why).
 * Returns the function that stops watching. inotify-based (fs.watch): nothing polls.
 */
export function watchToken(
  state: KeptState,
  onChange: (token: string) => void,
  onError: (message: string) => void,
): () => void {
  let last: string | undefined;
  const reread = () => {
    try {
      const token = readToken(state);
      if (token !== undefined && token !== last) {
        last = token;
        onChange(token);
      }
    } catch (e) {
      onError(String((e as Error)?.message ?? e));
    }
  };
  try {
    last = readToken(state);
  } catch {
    last = undefined;
  }
  let watcher: ReturnType<typeof watch>;
  try {
    watcher = watch(state.dir, { persistent: false }, (_event, name) => {
      if (name === null || name === TOKEN_FILE) reread();
    });
  } catch (e) {
    onError(`cannot watch ${state.dir} for a rotated token (${(e as NodeJS.ErrnoException).code ?? e})`);
    return () => {};
  }
  watcher.on('error', () => watcher.close());
  return () => watcher.close();
}
