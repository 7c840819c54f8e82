// The warm-up's rehearsals (warm-up.ts): one command, then the tools a coding loop calls first, each once
// through tools/call's own path with no audit line and no console entry, so that a client's first call of each
// finds its code compiled (docs/benchmarks.md, the coding loop). Reads run on the workspace; apply_patch's
// writes run on a scratch directory of the server's runtime directory, never on the workspace.
import { mkdtempSync, rmSync } from 'node:fs';
import path from 'node:path';
import { SERVER_PRINCIPAL } from '../core/principal.js';
import { ChangeBaseline } from '../git/baseline.js';
import { EditJournal } from '../patch/journal.js';
import { callTool } from '../protocol/call-tool.js';
import type { ProtocolHost } from '../protocol/host.js';
import type { Runtime } from '../runtime/runtime.js';
import { checkRoot } from '../workspace/paths.js';

/**
 * How many times the command path is rehearsed. After one run a client's first command still took 1.2–1.3× its
 * second in the server (V8 had compiled the path but seen it run once); after three, 1.03–1.12×
 * (docs/benchmarks.md, "The command path rehearsed three times").
 */
export const COMMAND_REHEARSALS = 3;

/**
 * Once the tools are loaded and the command helper is up, `echo` through exec_command's whole path
 * COMMAND_REHEARSALS times, each in a quiet moment and then forgotten: the first real command finds its code
 * compiled and the helper's first forks done (docs/architecture.md). Not a tool call of any client: no audit
 * line, never listed. Stops as soon as a client has run a command itself (that call warms the path).
 */
export async function rehearseCommand(runtime: Runtime, loaded: Promise<unknown>): Promise<void> {
  // A test that stops the server at a pause point aims at its own tool call, not at this one.
  if (runtime.config.testPause) return;
  await loaded;
  if (!(await runtime.commands.whenUp())) return;
  const call = unseenCall(runtime);
  let runs = 0;
  let forgotten = 0;
  while (runs < COMMAND_REHEARSALS) {
    // Not beside a client's call (core/quiet.ts): once none is being answered.
    await new Promise<void>((resolve) => runtime.quiet.later(resolve));
    // `asked` counts the rehearsals too: more than those means a client's own command went down this path.
    if (runtime.commands.asked > runs) break;
    const r = await call('exec_command', { cmd: 'echo rehearsal' });
    runs++;
    const id = r?.command_id;
    if (typeof id === 'string') {
      runtime.commands.forget(id);
      forgotten++;
    }
  }
  if (runs === 0) return runtime.log.debug('first-command rehearsal left out: a client ran a command first');
  runtime.log.debug('first-command rehearsal done', { runs, forgotten: forgotten === runs });
}

type UnseenCall = (
  name: string,
  args: Record<string, unknown>,
) => Promise<Record<string, unknown> | undefined>;

/**
 * A tool call through tools/call's own path (the lookup, the arguments, the result's shape and its JSON), with
 * no audit line and no console entry: what a client's first call runs besides the socket and the credential
 * check. Resolves the structured result.
 */
function unseenCall(runtime: Runtime, instead: Partial<ProtocolHost> = {}): UnseenCall {
  const unseen: ProtocolHost = {
    ...runtime,
    signal: runtime.signal,
    sandboxStatus: () => runtime.sandboxStatus(),
    audit: undefined,
    activity: undefined,
    ...instead,
  };
  return async (name, args) => {
    const r = await callTool(
      unseen,
      { name, arguments: args },
      SERVER_PRINCIPAL,
      new AbortController().signal,
    );
    JSON.stringify(r);
    return 'structuredContent' in r ? r.structuredContent : undefined;
  };
}

/**
 * The tools a coding loop calls first, each once, so that a client's first call of each finds its code compiled
 * instead of paying 4–15 ms for it (docs/benchmarks.md, the coding loop): list_dir of the root, read_file of its
 * smallest file's first line, search_text for that line's first word in that file, git_status, git_diff and
 * git_log on that file — only reads, and an error (no file, not a repository) is as good a rehearsal — then
 * apply_patch adding, changing and deleting a file in a scratch directory (rehearseWrites). Each waits for a
 * quiet moment, and the rest is left out once a client has called a tool.
 */
export async function rehearseTools(runtime: Runtime, loaded: Promise<unknown>): Promise<void> {
  if (runtime.config.testPause) return;
  await loaded;
  const call = unseenCall(runtime);
  const leftOut = () => runtime.log.debug('tool rehearsal left out: a client called a tool first');
  const listing = await step(runtime, () => call('list_dir', { path: '.', max_entries: 100 }));
  if (listing === null) return leftOut();
  const files = Object.entries((listing?.files ?? {}) as Record<string, number>).filter(
    ([, size]) => size > 0,
  );
  const file = files.sort((a, b) => a[1] - b[1])[0]?.[0];
  let query = 'a';
  if (file) {
    const read = await step(runtime, () => call('read_file', { path: file, end_line: 1 }));
    if (read === null) return leftOut();
    query = /[A-Za-z0-9_]+/.exec(String(read?.content ?? ''))?.[0] ?? query;
  }
  const reads: Array<[string, Record<string, unknown>]> = file
    ? [
        ['search_text', { query, path: file, max_results: 1 }],
        ['git_status', { path: file }],
        ['git_diff', { path: file }],
        ['git_log', { path: file, max_count: 1 }],
      ]
    : [];
  for (const [name, args] of reads)
    if ((await step(runtime, () => call(name, args))) === null) return leftOut();
  const written = await rehearseWrites(runtime);
  if (written === null) return leftOut();
  runtime.log.debug('tool rehearsal done', { reads: 1 + (file ? 1 : 0) + reads.length, written });
}

/**
 * apply_patch's whole writing path — the commit's temporary file, its sync and rename, the journal of edits
 * when the console keeps one — on a scratch directory of the server's own runtime directory: a file added,
 * changed, then deleted, the directory removed after. Its own root, change baseline and journal, so nothing
 * of it reaches git_diff, the console or the workspace. Resolves how many were written, or null once a client
 * called.
 */
async function rehearseWrites(runtime: Runtime): Promise<number | null> {
  const dir = mkdtempSync(path.join(runtime.dirs.root, 'rehearsal-'));
  try {
    const checked = checkRoot(dir);
    if (!checked.ok) return 0;
    const call = unseenCall(runtime, {
      root: checked.root,
      baseline: new ChangeBaseline(),
      edits: runtime.edits ? new EditJournal(runtime.clock) : undefined,
      workspaces: undefined,
    });
    const patches = [
      ['*** Add File: a.txt', '+one'],
      ['*** Update File: a.txt', '@@', '-one', '+two'],
      ['*** Delete File: a.txt'],
    ];
    let written = 0;
    for (const p of patches) {
      const patch = ['*** Begin Patch', ...p, '*** End Patch'].join('\n');
      const r = await step(runtime, () => call('apply_patch', { patch }));
      if (r === null) return null;
      if (r?.ok === true) written++;
    }
    return written;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * One rehearsal once no call is being answered; null (none run) once a client has called a tool — checked
 * before waiting too, so that the rest of the warm-up (the jails) does not wait for a quiet moment in vain.
 */
async function step<T>(runtime: Runtime, run: () => Promise<T>): Promise<T | undefined | null> {
  if (runtime.quiet.begun > 0) return null;
  await new Promise<void>((resolve) => runtime.quiet.later(resolve));
  if (runtime.quiet.begun > 0) return null;
  return run().catch(() => undefined);
}
