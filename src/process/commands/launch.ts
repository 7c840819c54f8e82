// Pure pieces of starting a command (registry.ts): the shell's argv and the errors a start can end in.
import { ToolError } from '../../core/tool-error.js';
import type { Command } from './command.js';

/**
 * `shell -c cmd`. In a sandboxed terminal (`jobControl`) the leader is bwrap, which would die of a typed ^C;
 * with job control on, the shell gives each job its own process group and the terminal, so ^C reaches only
 * the job.
 */
export function shellArgv(shell: { path: string; name: string }, jobControl: boolean, cmd: string): string[] {
  return jobControl
    ? [shell.path, '-c', 'set -m; eval "$1"; exit $?', shell.name, cmd]
    : [shell.path, '-c', cmd];
}

export function commandLimitError(running: readonly Command[], max: number): ToolError {
  return new ToolError(
    'COMMAND_LIMIT_REACHED',
    `${running.length} commands are already running, the most this server allows at once (SERVICE_EXEC_MAX_ACTIVE=${max})`,
    {
      max_running: max,
      running: running.map((c) => ({
        command_id: c.id,
        cmd: c.cmd.slice(0, 200),
        elapsed_ms: c.elapsedMs,
      })),
    },
    {
      suggestion:
        'Wait for one to finish (poll it with write_stdin and empty chars) or stop one with kill_command, then retry.',
    },
  );
}

export function ttyUnsupportedError(message: string): ToolError {
  return new ToolError(
    'TTY_UNSUPPORTED',
    message,
    {},
    {
      suggestion:
        'Run the command without tty (tty: false); interactive programs then read from the stdin argument.',
    },
  );
}
