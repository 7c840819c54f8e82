// The console's data (docs/console.md#what-it-shows): one snapshot when the page connects, then events. Diffs
// are rendered here from the edit journal's bytes (git/line-diff.ts), bounded per edit.
import { renderSVG } from 'uqr';
import type { EditEntry } from '../patch/journal.js';
import { unifiedHunks } from '../git/line-diff.js';
import type { ConsoleHost } from './host.js';
import type { ReviewPoint } from '../git/review-points.js';

/** The most diff text one edit carries to the page. */
export const MAX_DIFF_CHARS = 32 * 1024;
const EDITS_SHOWN = 20;

export interface EditView {
  id: string;
  time: number;
  client: string;
  tool: string;
  files: Array<{ path: string; op: 'add' | 'update' | 'delete' }>;
  diff: string;
  revertible: boolean;
  reverted_by?: string;
}

export function editView(e: EditEntry): EditView {
  let diff = '';
  for (const f of e.files) {
    if (diff.length >= MAX_DIFF_CHARS) break;
    const before = f.before?.toString('utf8') ?? '';
    const after = f.after?.toString('utf8') ?? '';
    const head = `--- ${f.before ? `a/${f.path}` : '/dev/null'}\n+++ ${f.after ? `b/${f.path}` : '/dev/null'}\n`;
    const body =
      f.before === null && f.after === null ? '(too large to show)\n' : unifiedHunks(before, after, 3);
    diff += head + body;
  }
  if (diff.length > MAX_DIFF_CHARS) diff = `${diff.slice(0, MAX_DIFF_CHARS)}\n… (cut)\n`;
  return {
    id: e.id,
    time: e.time,
    client: e.client,
    tool: e.tool,
    files: e.files.map((f) => ({
      path: f.path,
      op: f.before === null ? 'add' : f.after === null ? 'delete' : 'update',
    })),
    diff,
    revertible: e.revertible && !e.revertedBy,
    ...(e.revertedBy ? { reverted_by: e.revertedBy } : {}),
  };
}

const POINTS_SHOWN = 20;

/** A review point as the Edits view groups by it (docs/console.md#edits): newest first on the page. */
export interface PointView {
  id: string;
  time: number;
  since: string;
  files: Array<{ path: string; status: string; from?: string; added: number | null; removed: number | null }>;
}

export function pointView(p: ReviewPoint): PointView {
  return {
    id: p.id,
    time: p.time,
    since: p.since,
    files: p.files.map((f) => ({ ...f })),
  };
}

/** The most edits and commands a workspace's card carries (the newest). */
const PER_WORKSPACE = 10;

/** The open workspaces with their commands, edits and pending approvals (docs/console.md#workspaces). */
export function workspacesView(host: ConsoleHost) {
  return (host.workspaces?.list() ?? []).map((w) => ({
    id: w.id,
    path: w.path,
    mode: w.mode,
    ...(w.branch ? { branch: w.branch, base: w.base, source: w.source } : {}),
    commands: w.commands.slice(0, PER_WORKSPACE),
    edits: (w.edits?.list() ?? []).slice(-PER_WORKSPACE).map(editView),
    approvals: w.approvals?.pending() ?? [],
  }));
}

export function snapshot(host: ConsoleHost) {
  const connection = host.connection();
  return {
    // A QR code only of an address a phone can reach: the public one (a loopback URL would lead nowhere).
    connection: {
      ...connection,
      ...(connection.public ? { qr: renderSVG(connection.public, { border: 2 }) } : {}),
    },
    safety: host.safety(),
    network_blocks: host.networkBlocks(),
    activity: host.activity.recent().slice(-200),
    commands: host.commands(),
    edits: host.edits.list().slice(-EDITS_SHOWN).map(editView),
    points: host.reviews.list().slice(0, POINTS_SHOWN).map(pointView).reverse(),
    approvals: host.approvals.pending(),
    ...(host.workspaces ? { workspaces: workspacesView(host) } : {}),
  };
}
