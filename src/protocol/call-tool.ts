// tools/call: look the tool up (unknown name = JSON-RPC -32602, docs/design-notes.md#statuses), validate
// arguments (invalid = INVALID_ARGUMENT tool error the model can read), run the handler, shape the result,
// write the audit line.
import { validTraceparent } from '../core/audit.js';
import { summarize } from '../core/activity.js';
import type { Principal } from '../core/principal.js';
import { ToolError } from '../core/tool-error.js';
import type { ProtocolHost } from './host.js';
import { errorResult, internalError, successResult, type CallToolResult } from '../tools/result.js';
import { InputRequired, type ToolOutcome, type ToolServices } from '../tools/define.js';
import { WORKSPACE_ARG } from '../tools/catalog.js';
import { DIFF_META_KEY } from '../tools/apps.js';
import type { InputRequiredPayload } from '../policy/grants.js';
import { INVALID_PARAMS, ProtocolError } from './errors.js';

export type CallOutcome = CallToolResult | { inputRequired: InputRequiredPayload };

export async function callTool(
  runtime: ProtocolHost,
  params: Record<string, unknown> | undefined,
  principal: Principal,
  signal: AbortSignal,
  client: { canAsk?: boolean; ui?: boolean } = {},
): Promise<CallOutcome> {
  const { canAsk = false, ui = false } = client;
  const name = params?.name;
  if (typeof name !== 'string')
    throw new ProtocolError(INVALID_PARAMS, 'Invalid params: tools/call needs "name" (string)', 200);
  const entry = await runtime.catalog.lookup(name, ui);
  if (!entry) {
    throw new ProtocolError(
      INVALID_PARAMS,
      `Unknown tool: ${name}. tools/list names the available tools.`,
      200,
    );
  }
  const rawArgs = params?.arguments ?? {};
  const started = runtime.clock.monotonic();
  let result: CallToolResult;
  try {
    if (typeof rawArgs !== 'object' || rawArgs === null || Array.isArray(rawArgs)) {
      throw new ToolError(
        'INVALID_ARGUMENT',
        'arguments must be a JSON object',
        {},
        { suggestion: `Call ${name} with an object of named arguments.` },
      );
    }
    const consent = { canAsk, requestState: params?.requestState, inputResponses: params?.inputResponses };
    const [args, services] = inWorkspace(runtime, entry, rawArgs as Record<string, unknown>);
    const outcome = await entry.call(args, {
      runtime: services,
      principal,
      signal,
      consent,
      ...(ui ? { ui } : {}),
    });
    result = successResult(withWorkspaceId(outcome, rawArgs as Record<string, unknown>), ui);
  } catch (e) {
    if (e instanceof InputRequired) {
      audit(runtime, principal, name, rawArgs, started, 'INPUT_REQUIRED', params);
      return { inputRequired: e.payload };
    }
    if (e instanceof ToolError) result = errorResult(e);
    else {
      runtime.log.error('tool failed', { tool: name, error: String((e as Error)?.stack ?? e) });
      result = errorResult(internalError());
    }
  }
  const code = result.isError ? (result.structuredContent.error as { code: string }).code : undefined;
  audit(runtime, principal, name, rawArgs, started, code, params);
  return result;
}

/**
 * With project roots, a tool acting on a workspace takes an optional `workspace` id (docs/tools.md#several-workspaces):
 * it is taken off the arguments here and the call runs on that workspace's services; the tool never sees it.
 * Without project roots the arguments go through untouched, and the tool's strict schema refuses `workspace`.
 */
/**
 * The host's diff data names the workspace the call ran in (docs/review-card.md#data), so the card's own calls
 * (the rest of a cut diff, the revert) go to the same one; the tool never sees the argument.
 */
function withWorkspaceId(outcome: ToolOutcome, raw: Record<string, unknown>): ToolOutcome {
  const id = raw[WORKSPACE_ARG];
  const diff = outcome.meta?.[DIFF_META_KEY];
  if (typeof id !== 'string' || typeof diff !== 'object' || diff === null) return outcome;
  const cut = (diff as { cut?: { next?: { arguments?: Record<string, unknown> } } }).cut;
  const next = cut?.next
    ? { ...cut.next, arguments: { ...cut.next.arguments, [WORKSPACE_ARG]: id } }
    : undefined;
  const withId = { ...diff, workspace: id, ...(cut && next ? { cut: { ...cut, next } } : {}) };
  return { ...outcome, meta: { ...outcome.meta, [DIFF_META_KEY]: withId } };
}

function inWorkspace(
  runtime: ProtocolHost,
  entry: { scope?: 'workspace' | undefined; name: string },
  raw: Record<string, unknown>,
): [Record<string, unknown>, ToolServices] {
  const desk = runtime.workspaces;
  if (!desk || entry.scope !== 'workspace') return [raw, runtime];
  if (!Object.hasOwn(raw, WORKSPACE_ARG)) return [raw, desk.servicesFor(undefined)];
  const { [WORKSPACE_ARG]: id, ...rest } = raw;
  if (typeof id !== 'string' || id === '')
    throw new ToolError(
      'INVALID_ARGUMENT',
      '`workspace` must be the id open_workspace returned (a non-empty string)',
      { field: WORKSPACE_ARG },
      { suggestion: `Call ${entry.name} again with the id open_workspace returned, or without workspace.` },
    );
  return [rest, desk.servicesFor(id)];
}

function audit(
  runtime: ProtocolHost,
  principal: Principal,
  tool: string,
  args: unknown,
  started: number,
  error: string | undefined,
  params: Record<string, unknown> | undefined,
): void {
  const elapsed = Math.round((runtime.clock.monotonic() - started) * 100) / 100;
  // The operator's console (docs/console.md#activity): cheap when nobody has it open (a ring-buffer write).
  runtime.activity?.publish({
    kind: 'call',
    time: runtime.clock.now(),
    client: principal.label ?? `${principal.kind}:${principal.id}`,
    tool,
    summary: summarize(tool, args),
    ok: error === undefined,
    ...(error === undefined ? {} : { error }),
    ms: elapsed,
  });
  const audit = runtime.audit;
  if (!audit) return;
  const meta = params?._meta;
  audit.record({
    principal,
    tool,
    arguments: args,
    ok: error === undefined,
    error,
    elapsed_ms: elapsed,
    // A caller's W3C trace context ties this line to its trace (docs/operations.md#tracing); checked first.
    traceparent:
      typeof meta === 'object' && meta !== null
        ? validTraceparent((meta as Record<string, unknown>).traceparent)
        : undefined,
  });
}
