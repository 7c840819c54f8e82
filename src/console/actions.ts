// The console's state changes (docs/console.md#what-it-shows), once the request passed the session, Origin and
// CSRF checks: decide an approval, kill a command, revert an edit or a review point, reveal the bearer token,
// merge or discard a worktree (docs/console.md#workspaces). Each is audited.
import type { ServerResponse } from 'node:http';
import { ToolError } from '../core/tool-error.js';
import type { ConsoleHost } from './host.js';
import { json, refuse } from './respond.js';

const ACTION =
  /^\/api\/(approvals|commands|edits|points|workspaces)\/([A-Za-z0-9_-]{1,64})\/(decide|kill|revert|merge|discard)$/;

export async function act(
  host: ConsoleHost,
  res: ServerResponse,
  pathname: string,
  args: Record<string, unknown>,
) {
  if (pathname === '/api/credential') {
    host.audit('reveal_credential', {});
    return json(res, 200, { credential: host.credential() ?? null });
  }
  const m = ACTION.exec(pathname);
  const [what, id, action] = [m?.[1], m?.[2] ?? '', m?.[3]];
  if (what === 'approvals' && action === 'decide') return decide(host, res, id, args);
  if (what === 'commands' && action === 'kill') {
    const ok = await host.kill(id);
    return ok
      ? json(res, 200, { ok: true })
      : refuse(res, 409, 'not_running', `Command ${id} is not running.`);
  }
  if (what === 'edits' && action === 'revert') return revert(host, res, () => host.revert(id));
  if (what === 'points' && action === 'revert') return revert(host, res, () => host.revertPoint(id));
  if (what === 'workspaces' && (action === 'merge' || action === 'discard'))
    return land(host, res, id, action, args);
  refuse(res, 404, 'not_found', 'No such console action.');
}

async function revert(host: ConsoleHost, res: ServerResponse, run: () => Promise<void>): Promise<void> {
  try {
    await run();
    json(res, 200, { ok: true });
  } catch (e) {
    if (e instanceof ToolError) return refuse(res, 409, e.code, e.message);
    throw e;
  }
}

/** Merge or Discard (a Discard names the workspace again in `confirm`: the page's confirm step). */
async function land(
  host: ConsoleHost,
  res: ServerResponse,
  id: string,
  action: 'merge' | 'discard',
  args: Record<string, unknown>,
): Promise<void> {
  const ws = host.workspaces;
  if (!ws) return refuse(res, 404, 'not_found', 'This server has no project roots, so no workspaces.');
  if (action === 'discard' && args.confirm !== id)
    return refuse(res, 400, 'confirm', `Confirm the discard: send {"confirm": "${id}"}.`);
  const r = action === 'merge' ? await ws.merge(id) : await ws.discard(id);
  host.audit(`${action}_workspace`, { workspace: id }, r.ok ? undefined : r.reason);
  if (r.ok) return json(res, 200, { ok: true, ...r.value });
  refuse(res, r.reason === 'not_worktree' ? 404 : 409, r.reason, r.message);
}

/** The approval desk holding request `id`: the runtime's, or an open workspace's. */
function deskOf(host: ConsoleHost, id: string): ConsoleHost['approvals'] {
  if (host.approvals.get(id)) return host.approvals;
  for (const w of host.workspaces?.list() ?? []) if (w.approvals?.get(id)) return w.approvals;
  return host.approvals;
}

const REFUSED = {
  unknown: (id: string) => `Request ${id} is not open.`,
  decided: (id: string) => `Request ${id} was already decided.`,
  wrong_code: () => 'The pairing code is wrong; type the code the sign-in page shows.',
  withdrawn: (id: string) => `Request ${id} was withdrawn (three wrong codes, or the asker gave up).`,
};

function decide(host: ConsoleHost, res: ServerResponse, id: string, a: Record<string, unknown>): void {
  const action = a.action;
  if (action !== 'approve' && action !== 'deny')
    return refuse(res, 400, 'action', 'action is approve or deny.');
  const note = typeof a.note === 'string' ? a.note : undefined;
  const code = typeof a.code === 'string' ? a.code : undefined;
  const minutes = typeof a.minutes === 'number' && Number.isFinite(a.minutes) ? a.minutes : undefined;
  const desk = deskOf(host, id);
  const subject = desk.get(id)?.subject;
  const r = desk.decide(id, { action, note, code, minutes });
  host.audit(`${action}_request`, { request: id, subject, minutes, note }, r.ok ? undefined : r.reason);
  if (r.ok) return json(res, 200, { ok: true, request: r.view });
  refuse(res, r.reason === 'wrong_code' ? 403 : 409, r.reason, REFUSED[r.reason](id));
}
