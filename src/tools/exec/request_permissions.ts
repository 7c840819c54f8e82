// request_permissions (docs/tools.md#permission-modes, docs/design-notes.md#permission-grants): report-only,
// it never grants. A client that can ask its user (2026-07-28 with the elicitation capability) is told to
// send the refused call itself, which then asks the user once; any other client gets ELICITATION_UNSUPPORTED
// naming exactly what the operator can change (which mode, and that it takes a restart).
import * as z from 'zod';
import { ToolError } from '../../core/tool-error.js';
import { defineTool, READ_ONLY } from '../define.js';

const PERMISSIONS = ['network', 'destructive', 'outside_write', 'secret_env'] as const;
type Permission = (typeof PERMISSIONS)[number];

const input = z.object({
  tool_name: z.string().min(1).max(100),
  permission: z.enum(PERMISSIONS).describe('The `rule` of the PERMISSION_REQUIRED error.'),
  reason: z.string().min(1).max(2000).describe('Shown to the user.'),
  arguments: z.record(z.string(), z.unknown()).optional().describe('Of the refused call.'),
});

/** Nothing is ever granted here, so there is no `granted` field: the call itself asks (ask_on_call). */
const output = z.object({
  ask_on_call: z.literal(true),
  next_action: z.object({ tool: z.string(), arguments: z.record(z.string(), z.unknown()) }).optional(),
});

/** The least mode that allows each permission, and whether a one-time approval through the client can lift it. */
const NEEDS: Record<Permission, { mode: 'trusted' | 'dangerous'; askable: boolean }> = {
  network: { mode: 'trusted', askable: true },
  destructive: { mode: 'dangerous', askable: true },
  outside_write: { mode: 'dangerous', askable: false },
  secret_env: { mode: 'dangerous', askable: false },
};

export const requestPermissionsTool = defineTool({
  name: 'request_permissions',
  title: 'Request permissions',
  description: 'Ask how a call refused with PERMISSION_REQUIRED can be allowed; it grants nothing itself.',
  uses: ['config', 'approvals', 'sandboxStatus'],
  input,
  output,
  annotations: READ_ONLY,
  scope: 'workspace',
  handler(args, ctx) {
    const need = NEEDS[args.permission];
    const mode = ctx.runtime.config.permissionMode;
    if (need.askable && ctx.consent?.canAsk) {
      const structured: z.output<typeof output> = { ask_on_call: true };
      if (args.arguments) structured.next_action = { tool: args.tool_name, arguments: args.arguments };
      return {
        structured,
        text:
          `Nothing was granted. Send the ${args.tool_name} call again: this client can ask the user, who will be ` +
          'asked to approve exactly that call once.',
      };
    }
    // No one to ask through the client, but an operator on the console (docs/console.md#approvals).
    const desk = ctx.runtime.approvals;
    if (need.askable && desk && ctx.principal.kind !== 'server')
      desk.noteReason(
        `${ctx.principal.kind}:${ctx.principal.id}`,
        args.permission === 'network' ? 'network' : 'command',
        args.reason,
      );
    if (need.askable && desk?.attended && ctx.principal.kind !== 'server') {
      const structured: z.output<typeof output> = { ask_on_call: true };
      if (args.arguments) structured.next_action = { tool: args.tool_name, arguments: args.arguments };
      return {
        structured,
        text:
          `Nothing was granted yet. Send the ${args.tool_name} call again: the operator will be asked in the ` +
          "server's console, with your reason, and the call waits for the answer.",
      };
    }
    const why = !need.askable
      ? `${args.permission} cannot be approved per call`
      : 'this client cannot ask its user (that needs protocol 2026-07-28 with the elicitation capability)';
    throw new ToolError(
      'ELICITATION_UNSUPPORTED',
      `nothing was granted: ${why}. The server runs in ${mode} mode; only its operator can allow ` +
        `${args.permission} by restarting it with --permission-mode ${need.mode} (SERVICE_PERMISSION_MODE=${need.mode})` +
        // With the filtering proxy, one host is a smaller change (docs/tools.md#network-in-safe-mode).
        (args.permission === 'network' && ctx.runtime.sandboxStatus().network === 'proxy'
          ? ', or by adding the host to SERVICE_NETWORK_ALLOW (also a restart)'
          : ''),
      { permission: args.permission, permission_mode: mode, needs: need.mode },
      {
        suggestion:
          need.mode === 'dangerous'
            ? 'Find a way within the current mode, or tell the user what you need and why; dangerous mode is meant only for an isolated container or VM.'
            : 'Find a way within the current mode (e.g. cached or vendored dependencies), or tell the user what you need and why.',
      },
    );
  },
});
