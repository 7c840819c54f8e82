// Asking the operator (docs/console.md#approvals) when a refusal could be lifted but the client cannot ask its
// own user (every handshake-era client): the call waits up to its yield time for Approve or Deny on the
// console. Approved: the call goes on. Not yet: APPROVAL_PENDING, whose next_action is the same call, which
// keeps waiting on the same request. Denied: PERMISSION_DENIED with the operator's note. A standing approval
// ("this client for N minutes") lets the call go on at once.
import { ToolError } from '../../core/tool-error.js';
import type { ApprovalKind } from '../../policy/approvals.js';
import { fingerprint } from '../../policy/grants.js';
import type { ToolContext } from '../define.js';

export interface OperatorAsk {
  tool: string;
  args: Record<string, unknown>;
  kind: ApprovalKind;
  /** The command line or host names the operator decides on. */
  subject: string;
  /** The command that runs if approved, when the subject is not it (host names). */
  command?: string;
  /** The policy's own words for the refusal. */
  why: string;
  waitMs: number;
}

function clientKeyOf(ctx: ToolContext<never>): string {
  return `${ctx.principal.kind}:${ctx.principal.id}`;
}

/**
 * The operator's answer to a refusal they could lift: true when it is lifted (a standing approval, an approval
 * of this very call given while it waited earlier, or one given now); false when nobody can be asked (no
 * console, or no page of it open), so the caller's refusal stands; APPROVAL_PENDING or PERMISSION_DENIED
 * otherwise.
 */
export async function liftByOperator(ctx: ToolContext<'approvals'>, a: OperatorAsk): Promise<boolean> {
  const desk = ctx.runtime.approvals;
  if (!desk || ctx.principal.kind === 'server') return false;
  const clientKey = clientKeyOf(ctx);
  const key = fingerprint(a.tool, a.args);
  if (desk.standingFor(clientKey, a.kind) || desk.takeApproved(clientKey, key)) return true;
  if (!desk.attended) return false;
  const view = desk.request({
    kind: a.kind,
    clientKey,
    client: ctx.principal.label ?? clientKey,
    key,
    subject: a.subject,
    ...(a.command !== undefined ? { command: a.command } : {}),
    why: a.why,
  });
  const { result, note } = await desk.wait(view.id, a.waitMs, ctx.signal);
  if (result === 'approved') return true;
  if (result === 'denied') {
    throw new ToolError(
      'PERMISSION_DENIED',
      `the operator denied ${a.tool} (request ${view.id}): ${a.why}` + (note ? `. Their note: ${note}` : ''),
      { request: view.id, ...(note ? { note } : {}) },
      { suggestion: 'Do not run it again; find another way or ask the user what they want instead.' },
    );
  }
  throw new ToolError(
    'APPROVAL_PENDING',
    `waiting for the operator's approval in the console (request ${view.id}): ${a.why}`,
    { request: view.id, next_action: { tool: a.tool, arguments: a.args } },
    {
      retry: `${a.tool} ${JSON.stringify(a.args)} (the same call keeps waiting on request ${view.id})`,
    },
  );
}
