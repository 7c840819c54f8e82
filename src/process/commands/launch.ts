// Pure pieces of starting a command (registry.ts): the command's record, the shell's argv and the errors a start
// can end in.
import type { Clock } from '../../core/clock.js';
import { randomBase64url } from '../../core/random.js';
import { ToolError } from '../../core/tool-error.js';
import type { Config } from '../../config/load.js';
import type { RuntimeDirs } from '../runtime-dir.js';
import { isBwrap, type SandboxPlan } from '../sandbox/sandbox.js';
import { Command } from './command.js';
import { HEAD_BYTES } from './output.js';

/** The record of a command about to start under `plan`: its unguessable id, limits and what the result notes. */
export function newCommand(
  spec: { cmd: string; workdir: string; tty: boolean; timeoutMs: number; maxOutputBytes: number },
  plan: SandboxPlan,
  host: {
    config: Pick<Config, 'execStreamBufferBytes' | 'permissionMode'>;
    clock: Clock;
    root: { real: string };
    dirs: Pick<RuntimeDirs, 'home' | 'tmp' | 'cache'>;
  },
): Command {
  const confined = plan.status.in_use !== null;
  return new Command({
    id: randomBase64url(15),
    cmd: spec.cmd,
    workdir: spec.workdir,
    tty: spec.tty,
    sandboxed: isBwrap(plan),
    timeoutMs: spec.timeoutMs,
    maxOutputBytes: spec.maxOutputBytes,
    tailBytes: host.config.execStreamBufferBytes - HEAD_BYTES,
    clock: host.clock,
    notes: {
      mode: host.config.permissionMode,
      sandboxed: confined,
      network: plan.status.network,
      landlock: !plan.bwrap && confined,
      ...(plan.status.network_unavailable ? { netUnavailable: plan.status.network_unavailable } : {}),
      writable: [host.root.real, host.dirs.home, host.dirs.tmp, host.dirs.cache],
    },
  });
}

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
