// The composition root's side of the operator's console (docs/console.md): the runtime seen as a ConsoleHost —
// command views with their output tails, Kill and Revert as the operator (each an audit line), the connection
// settings clients need, and what keeps commands safe.
import { OPERATOR_PRINCIPAL } from '../core/principal.js';
import { ToolError } from '../core/tool-error.js';
import type { ActivityFeed } from '../core/activity.js';
import type { ConsoleHost, CommandView, ConnectionView, SafetyView } from '../console/host.js';
import type { EditJournal } from '../patch/journal.js';
import { restoreFiles } from '../patch/restore.js';
import { recordBeforeWrite } from '../git/baseline.js';
import type { ApprovalDesk } from '../policy/approvals.js';
import { DEFAULT_ALLOW } from '../process/net/net-allow.js';
import type { Command } from '../process/commands/command.js';
import type { Runtime } from '../runtime/runtime.js';
import { consoleWorkspaces } from './console-workspaces.js';

const TAIL_BYTES = 4096;
const COMMANDS_SHOWN = 30;
const KILL_GRACE_MS = 2000;

function tail(c: Command): string {
  const parts: string[] = [];
  for (const s of ['stdout', 'stderr'] as const) {
    const b = c.streams[s];
    const text = b.read(Math.max(0, b.total - TAIL_BYTES), b.total).toString('utf8');
    if (text) parts.push(text);
  }
  return parts.join('\n');
}

function view(c: Command): CommandView {
  return {
    id: c.id,
    cmd: c.cmd,
    workdir: c.workdir,
    status: c.status,
    exit_code: c.exitCode,
    signal: c.signal,
    elapsed_ms: Math.round(c.elapsedMs),
    sandboxed: c.sandboxed,
    tail: tail(c),
  };
}

export interface ConsoleWiring {
  runtime: Runtime;
  /** The runtime's console parts, known to exist (the console is on). */
  parts: { activity: ActivityFeed; approvals: ApprovalDesk; edits: EditJournal };
  /** The /mcp URL on this machine. */
  local: string;
  credential: () => string | undefined;
}

export function consoleHost(w: ConsoleWiring): ConsoleHost {
  const rt = w.runtime;
  const c = rt.config;
  const audit = (tool: string, args: unknown, started: number, error?: string) =>
    rt.audit?.record({
      principal: OPERATOR_PRINCIPAL,
      tool,
      arguments: args,
      ok: error === undefined,
      error,
      elapsed_ms: Math.round(rt.clock.monotonic() - started),
    });
  const workspaces = consoleWorkspaces(rt, view);
  return {
    ...(workspaces ? { workspaces } : {}),
    clock: rt.clock,
    log: rt.log,
    activity: w.parts.activity,
    approvals: w.parts.approvals,
    edits: w.parts.edits,
    commands: () => rt.commands.list().slice(-COMMANDS_SHOWN).reverse().map(view),
    kill: (id) => killCommand(rt, id, audit),
    revert: (id) => revertEdit(rt, w.parts.edits, id, audit),
    reviews: rt.reviews,
    pointDiff: (id) => pointDiff(rt, id),
    revertPoint: (id) => revertPoint(rt, w.parts.edits, id, audit),
    connection: () => connection(w),
    credential: () => (c.authMode === 'bearer' ? w.credential() : undefined),
    safety: () => safety(rt),
    audit: (action, args, error) => audit(action, args, rt.clock.monotonic(), error),
    networkBlocks: () => [...(rt.netBlocks?.recent() ?? [])],
  };
}

type Audit = (tool: string, args: unknown, started: number, error?: string) => void;

/** TERM, then KILL after KILL_GRACE_MS; false when there is no such running command. */
async function killCommand(rt: Runtime, id: string, audit: Audit): Promise<boolean> {
  const started = rt.clock.monotonic();
  let cmd: Command;
  try {
    cmd = rt.commands.get(id);
  } catch {
    return false;
  }
  if (!cmd.running) return false;
  cmd.send('SIGTERM');
  await cmd.waitUntil(() => !cmd.running, KILL_GRACE_MS, rt.signal);
  if (cmd.running) cmd.escalate();
  await cmd.waitUntil(() => !cmd.running, KILL_GRACE_MS, rt.signal);
  audit('kill_command', { command_id: id }, started);
  return true;
}

/** A revert through the patch engine, itself kept as an edit by `operator` and audited as revert_edit. */
async function revertEdit(rt: Runtime, edits: EditJournal, id: string, audit: Audit): Promise<void> {
  const started = rt.clock.monotonic();
  try {
    await edits.revert(
      {
        root: rt.root,
        locks: rt.patchLocks,
        log: rt.log,
        committed: (steps) => void edits.record('operator', 'revert', steps),
      },
      id,
    );
    audit('revert_edit', { edit: id }, started);
  } catch (e) {
    audit('revert_edit', { edit: id }, started, e instanceof ToolError ? e.code : 'INTERNAL_ERROR');
    throw e;
  }
}

/** The most diff text a review point carries to the page. */
const MAX_POINT_DIFF_CHARS = 64 * 1024;

/** Review point `id` against the point before it (or HEAD), as unified text for the console. */
async function pointDiff(rt: Runtime, id: string): Promise<string> {
  const p = rt.reviews.get(id);
  if (!p.since || p.files.length === 0) return '';
  const c = await rt.reviews.compare(p.since, id);
  const { byPath } = await rt.reviews.hunks(c, 4 * MAX_POINT_DIFF_CHARS);
  let diff = '';
  for (const f of c.files) {
    if (diff.length >= MAX_POINT_DIFF_CHARS) break;
    const from = f.status === 'added' ? '/dev/null' : `a/${f.from ?? f.path}`;
    const to = f.status === 'deleted' ? '/dev/null' : `b/${f.path}`;
    diff += `--- ${from}\n+++ ${to}\n${byPath.get(f.path) || (f.added === null ? '(binary)\n' : '')}`;
  }
  return diff.length > MAX_POINT_DIFF_CHARS ? `${diff.slice(0, MAX_POINT_DIFF_CHARS)}\n… (cut)\n` : diff;
}

/** "Revert to this review point": the engine of revert_changes, kept as an edit by `operator`, audited. */
async function revertPoint(rt: Runtime, edits: EditJournal, id: string, audit: Audit): Promise<void> {
  const started = rt.clock.monotonic();
  try {
    const plan = await rt.reviews.revertPlan(id);
    await restoreFiles(
      {
        root: rt.root,
        locks: rt.patchLocks,
        log: rt.log,
        beforeWrite: (files) => files.forEach((f) => recordBeforeWrite(rt, f)),
        committed: (steps) => void edits.record('operator', 'revert_changes', steps),
      },
      plan.files,
      'revert_changes',
    );
    audit('revert_changes', { point: id }, started);
  } catch (e) {
    audit('revert_changes', { point: id }, started, e instanceof ToolError ? e.code : 'INTERNAL_ERROR');
    throw e;
  }
}

function connection(w: ConsoleWiring): ConnectionView {
  const c = w.runtime.config;
  const pub = c.serverUrl ? `${c.serverUrl.replace(/\/+$/, '').replace(/\/mcp$/, '')}/mcp` : undefined;
  const url = pub ?? w.local;
  const header = c.authMode === 'bearer' ? ' --header "Authorization: Bearer TOKEN"' : '';
  const clients = [
    { client: 'Claude Code', text: `claude mcp add --transport http workbench ${url}${header}` },
    c.authMode === 'bearer'
      ? {
          client: 'Codex',
          text: `export WORKBENCH_TOKEN=TOKEN\ncodex mcp add workbench --url ${url} --bearer-token-env-var WORKBENCH_TOKEN`,
        }
      : { client: 'Codex', text: `codex mcp add workbench --url ${url}` },
    {
      client: 'Gemini CLI',
      text: `gemini mcp add -s user -t http${c.authMode === 'bearer' ? ' -H "Authorization: Bearer TOKEN"' : ''} workbench ${url}`,
    },
    {
      client: 'Cursor (.cursor/mcp.json)',
      text: JSON.stringify({
        mcpServers: {
          workbench: {
            url,
            ...(c.authMode === 'bearer' ? { headers: { Authorization: 'Bearer TOKEN' } } : {}),
          },
        },
      }),
    },
  ];
  if (pub) clients.unshift({ client: 'claude.ai / ChatGPT (custom connector URL)', text: pub });
  return {
    local: w.local,
    ...(pub ? { public: pub } : {}),
    auth: c.authMode,
    revealable: c.authMode === 'bearer',
    tunnel: pub ? `published at ${pub}` : 'not published (only this machine can connect)',
    clients,
  };
}

/** The console's network line: a network that failed closed says why and how to fix it. */
function networkView(mode: string, s: ReturnType<Runtime['sandboxStatus']>): string {
  if (mode === 'dangerous' || s.network === 'host') return 'host network';
  if (s.network === 'none')
    return s.network_unavailable ? `NONE (fail closed): ${s.network_unavailable}` : 'none';
  return mode === 'trusted'
    ? 'HTTP(S) to any public host through the filtering proxy'
    : 'HTTP(S) through the filtering proxy (allow-list by host name)';
}

function safety(rt: Runtime): SafetyView {
  const s = rt.sandboxStatus();
  const c = rt.config;
  return {
    permission_mode: c.permissionMode,
    sandbox: s.in_use ? `${s.in_use}` : `none: ${s.reason}`,
    network: networkView(c.permissionMode, s),
    allow: [...DEFAULT_ALLOW, ...c.networkAllow],
    deny: c.networkDeny,
    limits: rt.commands.limits,
  };
}
