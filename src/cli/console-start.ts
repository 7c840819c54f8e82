// Starting the operator's console (docs/console.md#access) beside the HTTP server: its own listener on
// 127.0.0.1 (never the /mcp port), the banner line with a one-time link, and the link key that lets
// `workbench-mcp console` mint a fresh link, kept in the workspace's state directory (private to the operator,
// like the kept bearer token; removed at shutdown).
import type { Runtime } from '../runtime/runtime.js';
import { readKept, removeKept, writeKept, type KeptState, type StateOpen } from '../state/state-dir.js';
import { consoleHost } from './console-host.js';
import { commandLine } from './self.js';

export const CONSOLE_FILE = 'console.json';

export interface ConsoleStart {
  runtime: Runtime;
  /** The /mcp URL on this machine. */
  local: string;
  credential: () => string | undefined;
  state: StateOpen | undefined;
  self: string;
  scope: string[];
}

/** Starts the console when it is on; resolves with the banner line (or a warning line when it cannot listen). */
export async function startConsole(s: ConsoleStart): Promise<string> {
  const rt = s.runtime;
  if (!rt.activity || !rt.approvals || !rt.edits) return '';
  const parts = { activity: rt.activity, approvals: rt.approvals, edits: rt.edits };
  const { createConsoleServer } = await import('../console/server.js');
  const fresh = commandLine(s.self, ['console', ...s.scope]);
  const con = createConsoleServer(
    consoleHost({ runtime: rt, parts, local: s.local, credential: s.credential }),
    {
      freshLinkCommand: fresh,
    },
  );
  const port = rt.config.consolePort;
  const ok = await new Promise<boolean>((resolve) => {
    con.server.once('error', (e: NodeJS.ErrnoException) => {
      rt.log.warn(
        `the operator's console cannot listen on 127.0.0.1:${port} (${e.code ?? e.message}); it is off`,
      );
      resolve(false);
    });
    con.server.listen(port, '127.0.0.1', () => resolve(true));
  });
  if (!ok) return '';
  rt.onShutdown(() => con.close());
  const state = s.state?.kind === 'on' ? s.state.state : undefined;
  if (state) {
    const a = con.server.address();
    const info = {
      port: typeof a === 'object' && a ? a.port : port,
      key: con.access.linkKey,
      pid: process.pid,
      url: s.local,
    };
    claimConsoleFile(rt, state, info);
  }
  return (
    `  operator's console:      ${con.link()}\n` +
    `                           (one-time link, valid 10 minutes; a fresh one: ${fresh})\n`
  );
}

/** What console.json says of the server that wrote it, when the file is there and names a pid. */
function owner(state: KeptState): { pid: number; url?: string } | undefined {
  try {
    const j = JSON.parse(readKept(state, CONSOLE_FILE) ?? 'null') as { pid?: unknown; url?: unknown } | null;
    const pid = j?.pid;
    if (typeof pid !== 'number' || !Number.isInteger(pid) || pid <= 0) return undefined;
    return typeof j?.url === 'string' ? { pid, url: j.url } : { pid };
  } catch {
    return undefined;
  }
}

const ownerPid = (state: KeptState) => owner(state)?.pid;

/** This workspace's running server with a console (another process), by its console.json: pid and /mcp URL. */
export function runningServer(state: StateOpen | undefined): { pid: number; url: string } | undefined {
  if (state?.kind !== 'on') return undefined;
  const o = owner(state.state);
  return o?.url && o.pid !== process.pid && alive(o.pid) ? { pid: o.pid, url: o.url } : undefined;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Writes console.json, naming this process as its owner, unless another server on the workspace that is
 * still running owns it: `workbench-mcp console` keeps finding that one, and this server's console is reached
 * by its banner's link. At shutdown the file is removed only while it is still this server's.
 */
function claimConsoleFile(
  rt: Runtime,
  state: KeptState,
  info: { port: number; key: string; pid: number; url: string },
) {
  const other = ownerPid(state);
  if (other !== undefined && other !== process.pid && alive(other)) {
    rt.log.info(
      `another server (pid ${other}) runs on this workspace: \`workbench-mcp console\` opens its console; this one's opens with the link below`,
    );
    return;
  }
  try {
    writeKept(state, CONSOLE_FILE, JSON.stringify(info) + '\n', { replace: true });
    rt.onShutdown(() => {
      if (ownerPid(state) === process.pid) removeKept(state, CONSOLE_FILE);
    });
  } catch (e) {
    rt.log.warn(`\`workbench-mcp console\` will not find this server: ${String((e as Error).message)}`);
  }
}
