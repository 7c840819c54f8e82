// check_exec_environment (docs/tools.md#commands): what a command will meet before it is run — permission
// mode and what it allows (and whether the kernel or only the command-line policy enforces it), the OS
// sandbox in use (or why none), how each tree's process count is bounded, shell, terminal support, runtime
// directories, the command limits and current use, and warnings (no sandbox, dangerous mode, fake read-only
// annotations, no git identity under the private HOME: docs/design-notes.md#git-hardening).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import * as z from 'zod';
import { UNCONFINED_NOTE } from '../../process/sandbox/sandbox.js';
import { loadPty } from '../../process/spawn/spawn.js';
import { defineTool, READ_ONLY, type ToolContext } from '../define.js';

const input = z.object({});
const output = z.object({
  permission_mode: z.enum(['safe', 'trusted', 'dangerous']),
  sandbox: z.object({
    requested: z.string(),
    in_use: z.string().optional(),
    reason: z.string(),
    network: z.string(),
    network_unavailable: z.string().optional(),
  }),
  process_limit: z.object({ max_processes: z.number(), enforced_by: z.string(), reason: z.string() }),
  policy: z.object({
    network: z.string(),
    writes_outside_workspace: z.string(),
    destructive_commands: z.string(),
    secret_env: z.string(),
  }),
  shell: z.string(),
  tty_available: z.boolean(),
  workspace: z.string(),
  runtime_dirs: z.object({ root: z.string(), home: z.string(), tmp: z.string(), cache: z.string() }),
  environment: z.object({ inherited: z.array(z.string()), set: z.record(z.string(), z.string()) }),
  limits: z.record(z.string(), z.number()),
  usage: z.object({ running: z.number(), finished_kept: z.number(), retained_output_bytes: z.number() }),
  warnings: z.array(z.string()),
});

const POLICY = {
  safe: {
    destructive_commands: 'refused (PERMISSION_REQUIRED)',
    secret_env: 'filtered from the environment; per-call keys refused',
  },
  trusted: {
    destructive_commands: 'refused (PERMISSION_REQUIRED)',
    secret_env: 'filtered from the environment; per-call keys refused',
  },
  dangerous: {
    destructive_commands: 'allowed',
    secret_env: "passed through (the server's own SERVICE_* settings excepted)",
  },
} as const;

type Mode = keyof typeof POLICY;
type Sandbox = ReturnType<ToolContext['runtime']['commands']['sandboxStatus']>;

/** What a command's network access is, per mode and sandbox. */
function networkPolicy(mode: Mode, sandbox: Sandbox): string {
  if (mode === 'trusted' && sandbox.network === 'proxy')
    return "HTTP(S) to any public host, through the filtering proxy ($HTTPS_PROXY); own network namespace: the host's loopback services and abstract sockets are out of reach, loopback/private/metadata addresses refused unless SERVICE_NETWORK_ALLOW_PRIVATE (docs/security-model.md#network-per-mode)";
  if (mode === 'dangerous') return 'allowed';
  if (sandbox.network === 'none')
    return `NONE: denied by the kernel (${
      sandbox.in_use === 'landlock'
        ? 'Landlock and seccomp refuse internet sockets'
        : 'own network namespace with only lo'
    }), because ${sandbox.network_unavailable ?? 'there is no proxy'} (docs/security-model.md#network-per-mode)`;
  if (mode === 'trusted') return 'allowed';
  if (sandbox.network === 'proxy')
    return 'HTTP(S) only, through the filtering proxy ($HTTPS_PROXY): the package registries and SERVICE_NETWORK_ALLOW; nothing else leaves the sandbox (docs/tools.md#network-in-safe-mode)';
  return 'network commands refused by the command-line policy only (no kernel sandbox: a script can still connect)';
}

/** Whether a command may write outside the workspace, per mode and sandbox. */
function writesPolicy(mode: Mode, sandbox: Sandbox): string {
  if (mode === 'dangerous') return 'allowed';
  if (sandbox.in_use === 'landlock')
    return 'denied by the kernel (Landlock: only the workspace and the runtime directory are writable; /tmp is not); the command-line policy refuses obvious ones first';
  if (sandbox.in_use)
    return 'denied by the kernel (read-only system; the workspace, the runtime directory and the private /tmp are writable); the command-line policy refuses obvious ones first';
  return `refused by the command-line policy only — ${UNCONFINED_NOTE}`;
}

function warningsFor(
  ctx: ToolContext<'config' | 'dirs' | 'root'>,
  sandbox: Sandbox,
  pty: ReturnType<typeof loadPty>,
): string[] {
  const { config, dirs, root } = ctx.runtime;
  const mode = config.permissionMode;
  const warnings: string[] = [];
  if (sandbox.in_use === null && mode !== 'dangerous')
    warnings.push(
      `No OS sandbox (${sandbox.reason.split(';')[0]}): ${mode} mode now only filters command lines and cannot stop a script — ` +
        'a program a command runs can read, write and connect anywhere the server user can. Install bubblewrap (and let it run) for kernel confinement.',
    );
  else if (sandbox.in_use === null) warnings.push(`No OS sandbox: ${sandbox.reason}.`);
  if (sandbox.network_unavailable && mode !== 'dangerous')
    warnings.push(`Commands have no network at all: ${sandbox.network_unavailable}.`);
  if (mode === 'dangerous')
    warnings.push(
      'Permission mode dangerous: destructive commands, writes anywhere and secret environment variables are allowed; use it only inside an isolated container or VM.',
    );
  if (config.dangerouslyFakeReadonlyAnnotations)
    warnings.push(
      '--dangerously-fake-readonly-annotations is on: tools/list reports every tool, exec_command included, as read-only.',
    );
  if (typeof pty === 'string') warnings.push(`tty: true is unavailable: ${pty}.`);
  if (!hasGitIdentity(root.real, dirs.home)) {
    warnings.push(
      "git commit will have no author identity: HOME is the private runtime directory, so the user's ~/.gitconfig is not read. " +
        'Pass env {"GIT_AUTHOR_NAME": …, "GIT_AUTHOR_EMAIL": …, "GIT_COMMITTER_NAME": …, "GIT_COMMITTER_EMAIL": …} or set user.name/user.email in the repository.',
    );
  }
  if (sandbox.in_use === 'bwrap')
    warnings.push(
      'Inside the sandbox a command that kills itself with a signal reports exit code 128+N rather than the signal.',
    );
  return warnings;
}

export const checkExecEnvironmentTool = defineTool({
  name: 'check_exec_environment',
  title: 'Check command environment',
  description:
    'What commands run with: permission mode, OS sandbox (or why none), shell, tty, HOME/TMPDIR, limits and use, ' +
    'warnings (e.g. no git identity).',
  uses: ['config', 'dirs', 'root', 'commands'],
  input,
  output,
  annotations: READ_ONLY,
  scope: 'workspace',
  handler(_args, ctx) {
    const { config, dirs, root, commands } = ctx.runtime;
    const mode = config.permissionMode;
    const sandbox = commands.sandboxStatus();
    const processLimit = commands.processLimit().status;
    const pty = loadPty();
    const env = commands.childEnvPreview();
    const warnings = warningsFor(ctx, sandbox, pty);
    const structured = {
      permission_mode: mode,
      sandbox: { ...sandbox, in_use: sandbox.in_use ?? undefined },
      process_limit: processLimit,
      policy: {
        network: networkPolicy(mode, sandbox),
        writes_outside_workspace: writesPolicy(mode, sandbox),
        ...POLICY[mode],
      },
      shell: commands.shellName,
      tty_available: typeof pty !== 'string',
      workspace: root.lexical,
      runtime_dirs: { ...dirs },
      environment: env,
      limits: commands.limits,
      usage: {
        running: commands.running().length,
        finished_kept: commands.list().filter((c) => !c.running).length,
        retained_output_bytes: commands.retainedBytes(),
      },
      warnings,
    };
    const l = commands.limits;
    const text = [
      `Permission mode: ${mode}. Sandbox: ${sandbox.in_use ?? 'none'} — ${sandbox.reason}.`,
      `Processes per command: at most ${processLimit.max_processes}, enforced by ${processLimit.enforced_by}.`,
      `Network: ${structured.policy.network}. Writes outside the workspace: ${structured.policy.writes_outside_workspace}. Destructive commands: ${structured.policy.destructive_commands}.`,
      `Shell: ${commands.shellName} -c. tty: ${typeof pty === 'string' ? 'unavailable' : 'available'}. HOME=${dirs.home} TMPDIR=${dirs.tmp} XDG_CACHE_HOME=${dirs.cache}.`,
      `Inherited environment: ${env.inherited.join(', ') || 'none'}.`,
      `Limits: ${l.max_running} running, ${l.max_finished_kept} finished kept for ${l.retention_s} s, ${l.stream_buffer_bytes} bytes kept per stream, ${l.total_buffer_bytes} bytes in total. Now: ${structured.usage.running} running, ${structured.usage.finished_kept} finished kept.`,
      ...warnings.map((w) => `Warning: ${w}`),
    ].join('\n');
    return { structured, text };
  },
});

/** A best-effort look for user.email in the config files git would read (no includes followed). */
function hasGitIdentity(workspace: string, home: string): boolean {
  const files = [
    path.join(workspace, '.git', 'config'),
    path.join(home, '.gitconfig'),
    path.join(home, '.config', 'git', 'config'),
    '/etc/gitconfig',
  ];
  return files.some((f) => {
    try {
      return /^\s*\[user\][^[]*^\s*email\s*=/im.test(readFileSync(f, 'utf8'));
    } catch {
      return false;
    }
  });
}
