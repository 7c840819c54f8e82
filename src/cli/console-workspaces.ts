// The composition root's side of the console's Workspaces section (docs/console.md#workspaces): the runtime's
// open workspaces (src/workspaces/desk.ts) as the console lists them, and Merge, Discard and the diff of a
// worktree through src/workspaces/land.ts, each refusal turned into a reason and a message for the page.
import type { CommandView, ConsoleWorkspaces, WorkspaceOutcome, WorkspaceParts } from '../console/host.js';
import type { Command } from '../process/commands/command.js';
import type { Runtime } from '../runtime/runtime.js';
import type { Desk } from '../workspaces/desk.js';
import { Landing, LandRefused } from '../workspaces/land.js';

const COMMANDS_SHOWN = 10;

async function outcome<T>(f: () => Promise<T>): Promise<WorkspaceOutcome<T>> {
  try {
    return { ok: true, value: await f() };
  } catch (e) {
    if (e instanceof LandRefused) return { ok: false, reason: e.reason, message: e.message };
    const err = e as { code?: unknown; message?: unknown };
    if (typeof err?.code === 'string' && typeof err.message === 'string')
      return { ok: false, reason: err.code, message: err.message };
    throw e;
  }
}

function partsOf(desk: Desk, view: (c: Command) => CommandView): WorkspaceParts[] {
  return desk.list().map((w) => {
    const s = desk.built(w.id);
    return {
      ...w,
      commands: s ? s.commands.list().slice(-COMMANDS_SHOWN).reverse().map(view) : [],
      edits: s?.edits,
      approvals: s?.approvals,
    };
  });
}

/** The console's view of the runtime's workspaces, or undefined without project roots. */
export function consoleWorkspaces(
  rt: Runtime,
  view: (c: Command) => CommandView,
): ConsoleWorkspaces | undefined {
  const desk = rt.workspaces;
  if (!desk) return undefined;
  const landing = new Landing(desk, { config: rt.config, dirs: rt.dirs, signal: rt.signal });
  return {
    list: () => partsOf(desk, view),
    diff: (id) => outcome(() => landing.diff(id)),
    merge: (id) =>
      outcome(async () => {
        const m = await landing.merge(id);
        return { commit: m.commit, fast_forward: m.fastForward };
      }),
    discard: (id) =>
      outcome(async () => {
        const path = desk.record(id)?.path ?? '';
        await landing.discard(id);
        return { removed: path };
      }),
  };
}
