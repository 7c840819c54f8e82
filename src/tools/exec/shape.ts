// The result exec_command and write_stdin share (docs/design-notes.md#command-results): status, exit code,
// signal, elapsed time, the output that is new since the last result (within max_output_bytes per stream),
// truncation counters, output_refs, and next_action — write_stdin with empty chars while running, read_output
// when output was left out. Handing back a final status is recorded, so retention keeps a command until that
// happened once.
import * as z from 'zod';
import type { Command, StreamName } from '../../process/commands/command.js';
import type { CommandRegistry } from '../../process/commands/registry.js';
import { NEXT_ACTION } from '../schema.js';
import { callText, lean } from '../result.js';
import { fmt, outputRef, READ_LIMIT_MAX, viewNew } from './view.js';

export const STATUS = z.enum(['running', 'exited', 'timeout', 'terminated', 'killed', 'failed']);

/**
 * Fields at their default are left out (docs/design-notes.md#lean-results): `exit_code` appears once the
 * command ended, `signal` when one ended it, each stream when it printed something new, `*_omitted_bytes` and
 * `output_refs` only when output was left out (the omitted count says it was truncated), `next_action` only
 * when there is a next call.
 */
export const COMMAND_RESULT = z.object({
  command_id: z.string(),
  status: STATUS,
  exit_code: z.number().optional(),
  signal: z.string().optional(),
  elapsed_ms: z.number().optional(),
  stdout: z.string().optional(),
  stderr: z.string().optional(),
  stdout_omitted_bytes: z.number().optional(),
  stderr_omitted_bytes: z.number().optional(),
  output_refs: z.object({ stdout: z.string().optional(), stderr: z.string().optional() }).optional(),
  next_action: NEXT_ACTION.optional(),
  /** What the sandbox or the proxy stopped, only when something was (process/commands/blocked.ts, ≤ 200 bytes). */
  blocked: z.object({ what: z.string(), why: z.string(), next: z.string() }).optional(),
});

export const COMMAND_ID = z.string().min(1).max(200);

export function pollAction(id: string) {
  return { tool: 'write_stdin', arguments: { command_id: id, chars: '' } };
}

export function statusLine(c: Command): string {
  const t = secs(c.elapsedMs);
  switch (c.status) {
    case 'running':
      return `Still running after ${t}.`;
    case 'exited':
      return `Exited with code ${c.exitCode} after ${t}.`;
    case 'terminated':
      return `Terminated by ${c.signal} after ${t}.`;
    case 'killed':
      return `Killed with SIGKILL after ${t} (it outlived ${[...c.sent].filter((s) => s !== 'SIGKILL').join(', ') || 'a softer signal'}).`;
    case 'timeout':
      return `Timed out: stopped after its timeout of ${secs(c.timeoutMs)}${c.signal ? ` (${c.signal})` : ''}.`;
    case 'failed':
      return `Failed to start${c.startError ? ` (${c.startError})` : ''}.`;
  }
}

function secs(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;
}

export type CommandResult = z.output<typeof COMMAND_RESULT>;

type Views = Record<StreamName, ReturnType<typeof viewNew>>;

/** The output each stream produced since the last result, and the read cursors moved past it. */
function takeNewOutput(c: Command, pageLimit: number): Views {
  const views = {} as Views;
  for (const s of ['stdout', 'stderr'] as const) {
    const buf = c.streams[s];
    const to = buf.total;
    views[s] = viewNew(buf, outputRef(c.id, s), c.cursor[s], to, c.maxOutputBytes, pageLimit);
    c.cursor[s] = to;
  }
  return views;
}

/** The status line and each stream's new output, as the model reads them. */
function outputLines(c: Command, views: Views): string[] {
  // The id is said where a next call needs it (running, or output left out), not on every finished result.
  const needsId = c.running || views.stdout.omitted > 0 || views.stderr.omitted > 0;
  const lines = [needsId ? `${statusLine(c)} command_id: ${c.id}` : statusLine(c)];
  const label = (s: StreamName) => (c.tty ? 'terminal output' : s);
  for (const s of ['stdout', 'stderr'] as const) {
    const v = views[s];
    if (!v.text) continue;
    lines.push(`--- ${label(s)} ---`, v.text.endsWith('\n') ? v.text.slice(0, -1) : v.text);
  }
  if (!views.stdout.text && !views.stderr.text) lines.push(c.running ? '(no new output yet)' : '(no output)');
  return lines;
}

/**
 * The result for `c` now, and it consumes what it reports: each stream's read cursor moves past the output
 * returned, the blocked note is taken, and a final status is recorded as handed back (retention). Call it
 * once per result.
 */
export function takeCommandOutcome(
  c: Command,
  registry: CommandRegistry,
): { structured: CommandResult; text: string } {
  const pageLimit = Math.min(Math.max(c.maxOutputBytes, 4096), READ_LIMIT_MAX);
  const views = takeNewOutput(c, pageLimit);
  const refs = { stdout: outputRef(c.id, 'stdout'), stderr: outputRef(c.id, 'stderr') };
  const omitted = (s: StreamName) => (views[s].omitted > 0 ? refs[s] : undefined);
  const structured: CommandResult = lean({
    command_id: c.id,
    status: c.status,
    exit_code: c.exitCode,
    signal: c.signal,
    elapsed_ms: c.elapsedMs,
    stdout: views.stdout.text,
    stderr: views.stderr.text,
    stdout_omitted_bytes: views.stdout.omitted,
    stderr_omitted_bytes: views.stderr.omitted,
    output_refs: { stdout: omitted('stdout'), stderr: omitted('stderr') },
  });
  const lines = outputLines(c, views);
  const blocked = c.takeBlocked();
  if (blocked) {
    structured.blocked = blocked;
    lines.push(`Blocked: ${blocked.what} (${blocked.why}). Next: ${blocked.next}`);
  }
  if (c.running) {
    const next = pollAction(c.id);
    structured.next_action = next;
    const stdin = c.stdinOpen ? 'send input with write_stdin chars, ' : '';
    lines.push(
      `Next: ${callText(next.tool, next.arguments)} waits for more output or the exit; ${stdin}kill_command ${JSON.stringify({ command_id: c.id })} stops it.`,
    );
  } else {
    const s = (['stdout', 'stderr'] as const).find((x) => views[x].readFrom !== null);
    if (s) {
      const args = { output_ref: refs[s], offset: views[s].readFrom as number, limit: pageLimit };
      structured.next_action = { tool: 'read_output', arguments: args };
      lines.push(
        `${fmt(views[s].omitted)} bytes of ${s} were left out; page them with ${callText('read_output', args)}.`,
      );
    }
    registry.markReturned(c);
  }
  return { structured, text: lines.join('\n') };
}
