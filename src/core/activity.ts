// The operator's view of what clients do (docs/console.md#activity): one entry per tool call, per client's hello
// (initialize, server/discover) and per refused credential or wrong password, newest last, bounded. Entries carry a one-line summary of the arguments, never
// their full text; secret-looking keys are never summarised.
import { Feed } from './feed.js';
import { SECRET_KEY } from './log.js';

export type ActivityEntry =
  | {
      kind: 'call';
      time: number;
      client: string;
      tool: string;
      summary: string;
      ok: boolean;
      error?: string;
      ms: number;
    }
  | { kind: 'refused'; time: number; client: string; what: string }
  /** A client said hello (initialize, or server/discover in 2026-07-28), with the name it gave, if any. */
  | { kind: 'connected'; time: number; client: string; era: string; name?: string; version?: string };

export const ACTIVITY_KEPT = 500;
const SUMMARY_CHARS = 160;
/** The argument that says most about a call, per tool; others get their first few short values. */
const MAIN_ARG: Record<string, string> = {
  exec_command: 'cmd',
  write_stdin: 'command_id',
  read_output: 'command_id',
  kill_command: 'command_id',
  read_file: 'path',
  list_dir: 'path',
  view_image: 'path',
  edit_file: 'path',
  search_text: 'query',
  list_files: 'glob',
  git_show: 'rev',
  request_permissions: 'permission',
};

export class ActivityFeed extends Feed<ActivityEntry> {
  constructor() {
    super(ACTIVITY_KEPT);
  }
}

/** One line a person can scan: the tool's main argument, else `key=value` pairs, cut at SUMMARY_CHARS. */
export function summarize(tool: string, args: unknown): string {
  if (typeof args !== 'object' || args === null || Array.isArray(args)) return '';
  const a = args as Record<string, unknown>;
  if (tool === 'apply_patch' && typeof a.patch === 'string') return cut(patchFiles(a.patch));
  const main = MAIN_ARG[tool];
  if (main && typeof a[main] === 'string') return cut(oneLine(a[main] as string));
  const parts: string[] = [];
  for (const [k, v] of Object.entries(a)) {
    if (SECRET_KEY.test(k)) continue;
    if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean')
      parts.push(`${k}=${oneLine(String(v))}`);
    if (parts.join(' ').length > SUMMARY_CHARS) break;
  }
  return cut(parts.join(' '));
}

function patchFiles(patch: string): string {
  const files = [...patch.matchAll(/^\*\*\* (?:Add|Update|Delete) File: (.+)$/gm)].map((m) => m[1]);
  return files.length ? files.join(', ') : 'patch';
}

function oneLine(s: string): string {
  return s.replace(/\s+/g, ' ').trim();
}

function cut(s: string): string {
  return s.length > SUMMARY_CHARS ? `${s.slice(0, SUMMARY_CHARS - 1)}…` : s;
}
