// The `blocked` note of a command result (docs/tools.md#network-in-safe-mode): when the
// sandbox, the proxy or a server limit stopped something a command tried, its result says what, why, and the
// exact next call or the setting an operator would change — at most NOTE_MAX_BYTES of JSON, and only when
// something was blocked. Notes come from two places: the proxy's refusals (exact, per command credential) and a
// cheap look at the command's error output for what the kernel said (a name looked up with no network, a write
// to the read-only system, the process limit, a masked secret or control socket, a write the Landlock
// sandbox refused: blocked-landlock.ts).
import { landlockWriteNote } from './blocked-landlock.js';
import { MAX_PER_COMMAND } from '../net/net-decision.js';

export interface BlockedNote {
  what: string;
  why: string;
  next: string;
}

/** The budget of one note as JSON (`{"what":…,"why":…,"next":…}`). */
export const NOTE_MAX_BYTES = 200;
/** Error output looked at per command, at most (a long build's stderr is not scanned to its end). */
export const SCAN_MAX_BYTES = 4 * 1024 * 1024;
/** Bytes of the previous chunk looked at again with the next (programs print one message in several writes). */
export const SCAN_OVERLAP = 256;

export interface NoteContext {
  mode: 'safe' | 'trusted' | 'dangerous';
  sandboxed: boolean;
  /** How a `safe`/`trusted` sandbox reaches the network: through the proxy, not at all, or the host's. */
  network: 'proxy' | 'none' | 'host';
  /** The Landlock sandbox (sandbox-landlock.ts): no network namespace, so never a proxy. */
  landlock?: boolean;
  /** With Landlock: where a command may write (a refused write elsewhere is named, blocked-landlock.ts). */
  writable?: readonly string[];
  /** Why a `safe`/`trusted` sandbox has no network at all, `…; fix: …` (sandbox.ts network_unavailable). */
  netUnavailable?: string;
}

/** Cuts `what` first, then `why`, so the note fits its budget; `next` is kept whole when it can be. */
export function fit(n: BlockedNote): BlockedNote {
  const size = (x: BlockedNote) => Buffer.byteLength(JSON.stringify(x));
  const out = { ...n };
  for (const k of ['what', 'why', 'next'] as const) {
    const over = size(out) - NOTE_MAX_BYTES;
    if (over <= 0) break;
    // The ellipsis is 3 bytes; characters of these strings are 1 byte or more.
    const keep = out[k].length - over - 3;
    out[k] = keep > 0 ? `${out[k].slice(0, keep)}…` : '…';
  }
  return out;
}

/** `text` in at most `bytes` bytes of JSON string content, cut with an ellipsis. */
function cutTo(text: string, bytes: number): string {
  const size = (t: string) => Buffer.byteLength(JSON.stringify(t)) - 2;
  if (size(text) <= bytes) return text;
  let keep = Math.max(0, bytes - 3);
  while (keep > 0 && size(text.slice(0, keep)) > bytes - 3) keep--;
  return `${text.slice(0, keep)}…`;
}

/** A host name as a note quotes it (the whole name is in the audit log and the proxy's 403). */
const short = (host: string) => (host.length > 40 ? `${host.slice(0, 39)}…` : host);

/** The note of a proxy refusal (net-decision.ts Refusal). */
export function proxyNote(d: {
  host: string;
  port: number;
  reason?: string;
  address?: string;
  kind?: string;
}): BlockedNote | undefined {
  // The usual ports go unsaid: every byte of the note counts against its budget.
  const what = d.port === 443 || d.port === 80 ? short(d.host) : `${short(d.host)}:${d.port}`;
  switch (d.reason) {
    case 'not_allowed':
      return fit({
        what,
        why: 'not on the allow-list',
        next: `request_permissions {"tool_name":"exec_command","permission":"network","reason":"${short(d.host)}"}`,
      });
    case 'denied':
      return fit({
        what,
        why: 'on SERVICE_NETWORK_DENY',
        next: 'operator: remove it from SERVICE_NETWORK_DENY',
      });
    case 'private_address':
      return fit({
        what,
        why: `resolves to ${d.kind ?? 'private'} address ${d.address ?? ''}`.trim(),
        next: `operator: SERVICE_NETWORK_ALLOW_PRIVATE=${short(d.host)}`,
      });
    case 'command_busy':
      return fit({
        what,
        why: `this command's per-command limit of ${MAX_PER_COMMAND} proxy connections is reached`,
        next: 'fewer connections at once (close idle ones, fewer parallel downloads)',
      });
    case 'foreign_credential':
      return fit({
        what,
        why: "another command's proxy credential",
        next: 'use the HTTPS_PROXY this command was given',
      });
    default:
      return undefined; // unresolved, unreachable, busy: the network's answer, not the sandbox's
  }
}

const NAME_LOOKUP =
  /Could not resolve host|getaddrinfo (?:ENOTFOUND|EAI_AGAIN)|\bEAI_AGAIN\b|Temporary failure in name resolution|Name or service not known|No address associated with hostname/;
/** A connect in a network namespace with only lo (the fail-closed sandbox): no route anywhere else. */
const NO_ROUTE = /Network is unreachable|ENETUNREACH/;
const READ_ONLY = /Read-only file system/;
const PROCESS_LIMIT =
  /workbench-mcp: this command (?:reached its limit of|'s process tree grew past) (\d+) processes/;
const MASKED =
  /(\/etc\/g?shadow-?|\/etc\/ssh\/ssh_host_\w+_key|\/etc\/(?:ssl|pki\/tls|ipsec\.d)\/private|\/etc\/letsencrypt|\/etc\/wireguard|(?:\/var)?\/run\/(?:docker|containerd|crio|podman|buildkit|snapd|dbus|systemd)[\w./-]*|docker\.sock)\S*?:? (?:Permission denied|Connection refused|No such file or directory)|Cannot connect to the Docker daemon/;

/**
 * `safe`/`trusted` with no network at all (docs/security-model.md#network-per-mode): the cause and its fix,
 * from the sandbox's status; without one, the Landlock sandbox or the unbuilt bridge.
 */
function noNetworkNote(ctx: NoteContext, what: string): BlockedNote {
  const [cause, fix] = (ctx.netUnavailable ?? '').split('; fix: ');
  const why = cause
    ? `${ctx.mode} has no network: ${cause}`
    : ctx.landlock
      ? `${ctx.mode} has no network in the Landlock sandbox (no proxy without bubblewrap)`
      : `${ctx.mode} has no network here (the proxy bridge is not built)`;
  const next = fix
    ? `operator: ${fix}`
    : ctx.landlock
      ? 'operator: let bubblewrap run (user namespaces)'
      : 'operator: build with a C compiler';
  // The fix is what the reader acts on, and `what` names the failure: the cause is cut first.
  const room = NOTE_MAX_BYTES - Buffer.byteLength(JSON.stringify({ what, why: '', next }));
  return fit({ what, why: cutTo(why, room), next });
}

/** A note from a chunk of a command's error output, or undefined (cheap: a few regex tests on the chunk). */
export function outputNote(chunk: string, ctx: NoteContext): BlockedNote | undefined {
  const limit = PROCESS_LIMIT.exec(chunk);
  if (limit)
    return fit({
      what: 'process limit',
      why: `the command tree reached ${limit[1]} processes`,
      next: 'fewer parallel jobs; operator: raise SERVICE_EXEC_MAX_PROCESSES',
    });
  if (!ctx.sandboxed || ctx.mode === 'dangerous') return undefined;
  if (ctx.mode === 'trusted' && ctx.network === 'proxy' && NAME_LOOKUP.test(chunk))
    return fit({
      what: 'name lookup',
      why: 'trusted mode: no direct network; any host through $HTTPS_PROXY',
      next: 'use an HTTP(S) client that honours HTTPS_PROXY; operator: --permission-mode dangerous',
    });
  if (ctx.mode === 'safe' && ctx.network === 'proxy' && NAME_LOOKUP.test(chunk))
    return fit({
      what: 'name lookup',
      why: 'safe mode has no direct network; only HTTP(S) through $HTTPS_PROXY',
      next: 'use an HTTP(S) client that honours HTTPS_PROXY; operator: --permission-mode trusted',
    });
  if (ctx.network === 'none' && NAME_LOOKUP.test(chunk)) return noNetworkNote(ctx, 'name lookup');
  if (ctx.network === 'none' && NO_ROUTE.test(chunk)) return noNetworkNote(ctx, 'network');
  const masked = MASKED.exec(chunk);
  if (masked)
    return fit({
      what: masked[1] ?? 'docker.sock',
      why: 'hidden by the sandbox (secret file or control socket)',
      next: 'none: it stays hidden in safe and trusted',
    });
  if (ctx.landlock && ctx.writable) {
    const n = landlockWriteNote(chunk, ctx.writable);
    if (n) return fit(n);
  }
  if (READ_ONLY.test(chunk))
    return fit({
      what: 'write outside the workspace',
      why: 'the system is read-only in the sandbox',
      next: 'write in the workspace or $TMPDIR',
    });
  return undefined;
}
