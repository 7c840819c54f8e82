// write_stdin (docs/tools.md#commands): write to a running command's terminal, or poll it with empty chars. A
// write returns shortly after the first new output; a poll returns on new output, the exit, or the deadline.
// An exited command answers a poll with its final status; a write to it is COMMAND_CLOSED.
import * as z from 'zod';
import { ToolError } from '../../core/tool-error.js';
import type { Command } from '../../process/commands/command.js';
import { defineTool } from '../define.js';
import { callText } from '../result.js';
import { MAX_YIELD_MS } from './exec_command.js';
import { COMMAND_ID, COMMAND_RESULT, takeCommandOutcome, pollAction } from './shape.js';
import { totals, waitForOutput, type Totals } from './settle.js';

const input = z.object({
  command_id: COMMAND_ID,
  chars: z
    .string()
    .default('')
    .describe('Typed into the terminal ("\\n" Enter, "\\u0003" Ctrl-C); empty polls.'),
  yield_time_ms: z.number().int().min(0).max(MAX_YIELD_MS).default(10_000),
});

export const writeStdinTool = defineTool({
  name: 'write_stdin',
  title: 'Write to / poll a command',
  description:
    'Continue a command from any client: empty chars polls (returns on new output, the exit or yield_time_ms); chars is ' +
    'typed into a tty command. Only new output is shown; a finished command, or one without tty, takes no input ' +
    '(COMMAND_CLOSED). Example: {"command_id": "Qm…", "chars": "print(6*7)\\n"} → {"status": "running", "stdout": "42\\n>>> "}.',
  uses: ['commands'],
  input,
  output: COMMAND_RESULT,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  scope: 'workspace',
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
    return takeCommandOutcome(c, registry);
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
