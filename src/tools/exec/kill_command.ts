// kill_command (docs/tools.md#commands): signal a command's whole process tree, escalate to SIGKILL after
// wait_ms, and report truthfully what happened (docs/design-notes.md#command-results): "terminated" by the
// signal sent, "killed" after escalation, "exited" when it ended on its own (before, or by handling the
// signal), "running" if even SIGKILL has not ended it within kill_wait_ms. Output stays readable afterwards.
import * as z from 'zod';
import { defineTool } from '../define.js';
import { callText, lean } from '../result.js';
import { COMMAND_ID, STATUS, statusLine } from './shape.js';
import { outputRef } from './view.js';

const input = z.object({
  command_id: COMMAND_ID,
  signal: z.enum(['TERM', 'KILL', 'INT']).default('TERM'),
  wait_ms: z.number().int().min(0).max(30_000).default(5000).describe('Then SIGKILL.'),
  kill_wait_ms: z
    .number()
    .int()
    .min(0)
    .max(10_000)
    .default(2000)
    .describe('Wait after SIGKILL before answering.'),
});

const output = z.object({
  status: STATUS,
  signal_sent: z.string().optional(),
  signal: z.string().optional(),
  exit_code: z.number().optional(),
});

export const killCommandTool = defineTool({
  name: 'kill_command',
  title: 'Stop a command',
  description:
    'Stop a command from any client: signal its process group, wait up to wait_ms, then SIGKILL. status: "terminated" ' +
    '(the signal sent), "killed" (SIGKILL needed) or "exited" (ended by itself). Example: {"command_id": "Qm…"} → {"status": "terminated", "signal_sent": "SIGTERM", "signal": "SIGTERM"}.',
  uses: ['commands'],
  input,
  output,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  scope: 'workspace',
  async handler(args, ctx) {
    const registry = ctx.runtime.commands;
    const c = registry.get(args.command_id);
    let sent: string | null = null;
    if (c.running) {
      const sig = `SIG${args.signal}` as NodeJS.Signals;
      if (c.send(sig)) sent = sig;
      if (sig !== 'SIGKILL') {
        await c.waitUntil(() => !c.running, args.wait_ms, ctx.signal);
        if (c.running && c.escalate()) sent ??= 'SIGKILL';
      }
      await c.waitUntil(() => !c.running, args.kill_wait_ms, ctx.signal);
    }
    const structured = lean({ status: c.status, signal_sent: sent, signal: c.signal, exit_code: c.exitCode });
    const lines = [
      sent === null
        ? `Nothing sent: command ${c.id} ${c.running ? 'had no process left to signal' : 'had already finished'}. ${statusLine(c)}`
        : `Sent ${sent} to command ${c.id}. ${statusLine(c)}`,
    ];
    if (c.running)
      lines.push(
        `It is still running; check again with ${callText('write_stdin', { command_id: c.id, chars: '' })}.`,
      );
    else {
      registry.markReturned(c);
      lines.push(
        `Its output stays readable: ${callText('read_output', { output_ref: outputRef(c.id, 'stdout') })}.`,
      );
    }
    return { structured, text: lines.join('\n') };
  },
});
