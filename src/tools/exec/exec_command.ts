// exec_command (docs/tools.md#commands): validate, apply the permission-mode policy and the environment
// rules, start the command through the runtime's registry, wait up to yield_time_ms for it to finish, and
// return what it printed. The command is a workspace resource: the request only starts it.
import * as z from 'zod';
import { ToolError } from '../../core/tool-error.js';
import { checkCallEnv } from '../../process/commands/env.js';
import { classifyCommand, type Refusal } from '../../policy/classify.js';
import { fingerprint, type Redeemed } from '../../policy/grants.js';
import { requireDirectory, resolveExisting } from '../common.js';
import { defineTool, InputRequired, type ToolContext } from '../define.js';
import { COMMAND_RESULT, takeCommandOutcome } from './shape.js';
import { FIRST_OUTPUT_SETTLE, totals, waitForOutput } from './settle.js';
import { liftByOperator } from './operator-approval.js';

type Args = z.output<typeof input>;
/** What the policy check and the proxy's grant use of the server. */
type PolicyServices = 'root' | 'config' | 'dirs' | 'commands' | 'grants' | 'approvals';

export const MAX_TIMEOUT_MS = 3_600_000;
export const MAX_YIELD_MS = 30_000;
export const MAX_OUTPUT_BYTES_LIMIT = 1_048_576;

const input = z.object({
  cmd: z.string().min(1),
  workdir: z.string().default('.'),
  timeout_ms: z.number().int().min(1).max(MAX_TIMEOUT_MS).default(600_000).describe('Then TERM, then KILL.'),
  yield_time_ms: z
    .number()
    .int()
    .min(0)
    .max(MAX_YIELD_MS)
    .default(10_000)
    .describe('How long to wait before answering "running".'),
  max_output_bytes: z
    .number()
    .int()
    .min(256)
    .max(MAX_OUTPUT_BYTES_LIMIT)
    .default(65_536)
    .describe('Per stream and result.'),
  tty: z.boolean().default(false),
  stdin: z.string().default('').describe('Written at start, then closed (kept open with tty).'),
  env: z.record(z.string(), z.string()).default({}),
});

export const execCommandTool = defineTool({
  name: 'exec_command',
  title: 'Run command',
  description:
    'Run a shell command (bash -c) in the workspace, waiting up to yield_time_ms. Still running: status "running" and ' +
    'next_action (write_stdin, empty chars) to wait more. A non-zero exit is a normal result. Commands outlive the request: ' +
    'any client can poll, read or kill one by command_id. Output over max_output_bytes keeps head and tail; read_output ' +
    `pages the rest. tty: true gives a terminal (REPLs) and returns once the first output pauses ${FIRST_OUTPUT_SETTLE.quietMs / 1000} s. ` +
    'Example: {"cmd": "npm test"} → {"status": "exited", "exit_code": 1, "stdout": "…"}.',
  uses: ['root', 'config', 'dirs', 'commands', 'grants', 'approvals'],
  input,
  output: COMMAND_RESULT,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  scope: 'workspace',
  async handler(args, ctx) {
    if (args.cmd.includes('\0'))
      throw new ToolError(
        'INVALID_ARGUMENT',
        'cmd contains a NUL character',
        {},
        { suggestion: 'Remove the NUL character from cmd.' },
      );
    const dir = resolveExisting(ctx, args.workdir, 'workdir');
    requireDirectory(dir, 'exec_command');
    checkEnv(args.env, ctx);
    await checkPolicy(args, dir.real, ctx);
    const callKey = fingerprint('exec_command', args);
    const netGrant = await proxyGrant(args, callKey, ctx);
    const registry = ctx.runtime.commands;
    const c = registry.start({
      cmd: args.cmd,
      cwd: dir.real,
      workdir: dir.rel,
      tty: args.tty,
      timeoutMs: args.timeout_ms,
      maxOutputBytes: args.max_output_bytes,
      stdin: args.stdin,
      env: args.env,
      callKey,
      netGrant,
    });
    // A terminal program returns once its first output has settled (a REPL's prompt); pipes run to the exit
    // or yield_time_ms.
    if (args.tty) await waitForOutput(c, totals(c), args.yield_time_ms, ctx.signal, FIRST_OUTPUT_SETTLE);
    else await c.waitUntil(() => !c.running, args.yield_time_ms, ctx.signal);
    // `running` means the process exists (docs/tools.md#commands): a very short yield still waits for the
    // spawn itself.
    if (c.running) await c.started();
    return takeCommandOutcome(c, registry);
  },
});

function checkEnv(env: Record<string, string>, ctx: ToolContext<'config'>): void {
  const mode = ctx.runtime.config.permissionMode;
  const r = checkCallEnv(env, mode);
  if (r.ok) return;
  if (r.reason === 'invalid') {
    throw new ToolError(
      'INVALID_ARGUMENT',
      `env key ${JSON.stringify(r.key)} is not usable: ${r.why}`,
      { key: r.key },
      { suggestion: 'Fix or drop that env entry and call exec_command again.' },
    );
  }
  const what = r.reason === 'secret' ? 'look like credentials' : 'change how programs load code';
  throw new ToolError(
    'PERMISSION_REQUIRED',
    `env ${r.keys.join(', ')} ${what}; in ${mode} mode such variables are neither inherited nor accepted per call`,
    {
      permission_mode: mode,
      rule: r.reason === 'secret' ? 'secret_env' : 'loader_env',
      keys: r.keys,
      needs: 'dangerous',
    },
    {
      suggestion:
        'Run the command without them. Only an operator who restarts the server with --permission-mode dangerous ' +
        '(SERVICE_PERMISSION_MODE=dangerous, meant for an isolated container or VM) lets commands receive them.',
    },
  );
}

/**
 * The command policy; returns the refusal the user lifted for this one call
 * (docs/design-notes.md#permission-grants), if any. A refusal the user may lift (a destructive command,
 * network in `safe`) is asked through the client when it can ask (`input_required`); the retried call with
 * the user's acceptance runs once. Anything else is refused.
 */
async function checkPolicy(
  args: Args,
  cwd: string,
  ctx: ToolContext<PolicyServices>,
): Promise<Refusal['kind'] | undefined> {
  const cmd = args.cmd;
  const { config, root, dirs, commands } = ctx.runtime;
  const mode = config.permissionMode;
  if (mode === 'dangerous') return undefined;
  const sandbox = commands.sandboxStatus();
  const sandboxed = sandbox.in_use !== null;
  const v = classifyCommand(cmd, {
    mode,
    cwd,
    // In the sandbox /tmp is this server's private directory (docs/design-notes.md#sandbox-mounts); /var/tmp
    // is read-only there.
    writableRoots: [root.lexical, root.real, dirs.root, ...(sandboxed ? ['/tmp'] : [])],
    home: dirs.home,
    // In a sandbox the kernel and the filtering proxy decide (docs/tools.md#network-in-safe-mode): `npm
    // install` from a registry on the allow-list needs nobody's approval, and what the proxy refuses is asked
    // about by host name when the call comes again (proxyGrant).
    networkIsolated: sandbox.network !== 'host',
  });
  if (v.ok) return undefined;
  const liftable = v.kind === 'destructive' || (v.kind === 'network' && mode === 'safe');
  const consent = ctx.consent;
  if (liftable && consent?.requestState !== undefined) {
    const r = ctx.runtime.grants.redeem('exec_command', args, consent.requestState, consent.inputResponses);
    if (r.ok) return v.kind;
    throw grantRefused(r.reason, mode, v);
  }
  if (liftable && consent?.canAsk) {
    const what = v.kind === 'network' ? 'with network access' : `although ${v.reason}`;
    throw new InputRequired(
      ctx.runtime.grants.ask(
        'exec_command',
        args,
        `Allow this command to run once ${what}?\n\n${cmd}\n\n(in ${cwd}; the server is in ${mode} mode)`,
      ),
    );
  }
  // No one to ask through the client: the operator's console, when it is on (docs/console.md#approvals).
  const lifted =
    liftable &&
    (await liftByOperator(ctx, {
      tool: 'exec_command',
      args,
      kind: v.kind === 'network' ? 'network' : 'command',
      subject: cmd,
      why: `${mode} mode refuses it: ${v.reason}`,
      waitMs: args.yield_time_ms,
    }));
  if (lifted) return v.kind;
  throw policyRefusal(v, mode, sandboxed, liftable && ctx.runtime.approvals !== undefined);
}

/** PERMISSION_REQUIRED for a refusal nobody lifted, with what the model can do instead. */
function policyRefusal(v: Refusal, mode: string, sandboxed: boolean, consoleCanLift: boolean): ToolError {
  const flag = `--permission-mode ${v.needs} (SERVICE_PERMISSION_MODE=${v.needs})`;
  const suggestion =
    v.kind === 'network'
      ? `Work offline (vendored or cached dependencies), or ask the operator to restart the server with ${flag}; installing bubblewrap instead would let the kernel, not this policy, keep commands offline.`
      : v.kind === 'outside_write'
        ? `Write inside the workspace or under $TMPDIR instead. If the change outside is really needed, ask the user to make it; an operator can restart the server with ${flag}, meant only for an isolated container or VM.`
        : `If this is really intended, ask the user to run it themselves, or use a narrower command (e.g. delete named paths without -f). An operator can restart the server with ${flag}, meant only for an isolated container or VM.`;
  return new ToolError(
    'PERMISSION_REQUIRED',
    `exec_command refused in ${mode} mode: ${v.reason}. This command-line policy is the second line; ` +
      (sandboxed
        ? 'the first is the kernel sandbox, which also stops what a script does.'
        : 'no kernel sandbox is in use here, so a script that does the same would not be stopped.'),
    { permission_mode: mode, rule: v.kind, needs: v.needs },
    {
      suggestion: consoleCanLift
        ? `${suggestion} Or ask the user to open this server's console (\`workbench-mcp console\`), then send the same call again: it waits for their approval there.`
        : suggestion,
    },
  );
}

/**
 * A call the filtering proxy refused hosts to before (the same tool and arguments, recently): a client that
 * can ask its user is asked whether this one run may reach those names (docs/design-notes.md#permission-grants);
 * the accepted retry runs with them allowed for its own proxy credential only, until it ends. Any other client
 * runs the call as it is — and meets the same refusal, with the same `blocked` note.
 */
async function proxyGrant(args: Args, callKey: string, ctx: ToolContext<PolicyServices>): Promise<string[]> {
  const { config, commands, grants } = ctx.runtime;
  if (config.permissionMode !== 'safe' || commands.sandboxStatus().network !== 'proxy') return [];
  const hosts = commands.refusedHosts(callKey);
  const consent = ctx.consent;
  if (hosts.length === 0 || !consent) return [];
  const v: Refusal = {
    ok: false,
    kind: 'network',
    needs: 'trusted',
    reason: `the network allow-list refused ${hosts.join(', ')} to this command`,
  };
  if (consent.requestState !== undefined) {
    const r = grants.redeem('exec_command', args, consent.requestState, consent.inputResponses);
    if (r.ok) return hosts;
    throw grantRefused(r.reason, config.permissionMode, v);
  }
  if (!consent.canAsk) {
    const lifted = await liftByOperator(ctx, {
      tool: 'exec_command',
      args,
      kind: 'network',
      subject: hosts.join(', '),
      command: args.cmd,
      why: v.reason,
      waitMs: args.yield_time_ms,
    });
    return lifted ? hosts : [];
  }
  throw new InputRequired(
    grants.ask(
      'exec_command',
      args,
      `Allow this command to reach ${hosts.join(', ')} once? ${hosts.length > 1 ? 'They are' : 'It is'} not on the ` +
        `server's network allow-list (safe mode).\n\n${args.cmd}`,
    ),
  );
}

function grantRefused(reason: (Redeemed & { ok: false })['reason'], mode: string, v: Refusal): ToolError {
  const why =
    reason === 'declined'
      ? 'the user declined it'
      : reason === 'mismatch'
        ? 'the approval was given for a different call'
        : reason === 'no_answer'
          ? 'the retry carried no answer to the approval request'
          : 'the approval is unknown, already used or expired';
  return new ToolError(
    'PERMISSION_REQUIRED',
    `exec_command refused in ${mode} mode: ${v.reason}; ${why}`,
    { permission_mode: mode, rule: v.kind, needs: v.needs, grant: reason },
    {
      suggestion:
        reason === 'declined'
          ? 'Do not run it; ask the user what they want instead.'
          : 'Send the exec_command call again without requestState to ask the user once more.',
    },
  );
}
