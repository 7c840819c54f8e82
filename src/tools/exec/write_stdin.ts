// write_stdin (tool-contract "Commands"): write to a running command's terminal, or poll it with empty chars.
// A write returns shortly after the first new output; a poll returns on new output, the exit, or the deadline.
// An exited command answers a poll with its final status; a write to it is COMMAND_CLOSED.
import { z } from 'zod';
import { ToolError } from '../../core/tool-error.js';
import type { Command } from '../../process/command.js';
import { defineTool } from '../define.js';
import { callText } from '../result.js';
import { MAX_YIELD_MS } from './exec_command.js';
import { COMMAND_ID, COMMAND_RESULT, commandOutcome, pollAction } from './shape.js';
import { totals, waitForOutput, type Totals } from './settle.js';

const input = z.object({
  command_id: COMMAND_ID,
  chars: z
    .string()
    .default('')
    .describe('Text to type into the terminal ("\\n" for Enter, "\\u0003" for Ctrl-C); empty polls.'),
  yield_time_ms: z
    .number()
    .int()
    .min(0)
    .max(MAX_YIELD_MS)
    .default(10_000)
    .describe('Most time to wait for new output (≤ 30000).'),
});

export const writeStdinTool = defineTool({
  name: 'write_stdin',
  title: 'Write to / poll a command',
  description:
    'Continue a command started by exec_command, from any client. With empty chars it polls: it returns as soon as there is new ' +
    'output, when the command exits, or after yield_time_ms, and a finished command answers with its final status. With chars ' +
    "it types them into the command's terminal (exec_command with tty: true) and returns shortly after the reply. Only output " +
    'not yet returned is shown. Writing to a finished command, or to one started without tty (its stdin was closed after the ' +
    'stdin argument), is COMMAND_CLOSED. Example: after exec_command {"cmd": "python3 -i", "tty": true, "yield_time_ms": 1000} ' +
    'answered {"status": "running", "command_id": "Qm…"}, write_stdin {"command_id": "Qm…", "chars": "print(6*7)\\n"} → ' +
    '{"status": "running", "stdout": "print(6*7)\\n42\\n>>> "}; write_stdin {"command_id": "Qm…", "chars": ""} polls.',
  input,
  output: COMMAND_RESULT,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  async handler(args, ctx) {
    const registry = ctx.runtime.commands;
    const c = registry.get(args.command_id);
    let since: Totals;
    if (args.chars !== '') {
      if (!c.running)
        throw closed(
          c,
          `it has finished (${c.status}${c.exitCode !== null ? `, exit code ${c.exitCode}` : ''}${c.signal ? `, ${c.signal}` : ''})`,
        );
      if (!c.stdinOpen) {
        throw closed(
          c,
          'it was started without tty, so its stdin was closed after the stdin argument was written',
        );
      }
      since = totals(c);
      c.write(args.chars);
    } else since = { ...c.cursor };
    await waitForOutput(c, since, args.yield_time_ms, ctx.signal);
    return commandOutcome(c, registry);
  },
});

function closed(c: Command, why: string): ToolError {
  return new ToolError(
    'COMMAND_CLOSED',
    `command ${c.id} cannot take input: ${why}`,
    { command_id: c.id, status: c.status, tty: c.tty },
    {
      retry: callText('write_stdin', pollAction(c.id).arguments),
      suggestion: c.running
        ? 'Poll it with empty chars, or stop it with kill_command; to drive a program interactively, start it with exec_command and tty: true.'
        : 'Poll with empty chars for its final output, or run exec_command again (with tty: true for interactive input).',
    },
  );
}
