// Pieces several tools share: the argument schemas that repeat (described only where the name does not say
// it), resolving a path that must exist, and human-readable sizes for model-facing text.
import { statSync, type Stats } from 'node:fs';
import * as z from 'zod';
import { ToolError } from '../core/tool-error.js';
import { notFound, resolvePath, type ResolvedPath } from '../workspace/paths.js';
import type { ToolContext } from './define.js';
import type { CommitStep } from '../patch/commit.js';

/** A workspace path (docs/tools.md#paths): the name says what it is, so it carries no description by default. */
export const pathArg = (what?: string) => (what ? z.string().describe(what) : z.string());
export const includeHiddenArg = z.boolean().default(false);
export const includeIgnoredArg = z
  .boolean()
  .default(false)
  .describe('Also git-ignored paths, node_modules, dist, ….');
export const globList = (what?: string) => {
  const list = z.array(z.string()).max(100).optional();
  return what ? list.describe(what) : list;
};

/** The arguments that differ from their defaults: what a next_action repeats (parsed args carry every default). */
export function explicitArgs(input: z.ZodObject, args: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(args)) {
    const d = (input.shape[k] as z.ZodType | undefined)?.safeParse(undefined);
    if (v !== undefined && !(d?.success && JSON.stringify(d.data) === JSON.stringify(v))) out[k] = v;
  }
  return out;
}

export interface Existing extends ResolvedPath {
  stat: Stats;
}

export function resolveExisting(ctx: ToolContext<'root'>, input: string, argName = 'path'): Existing {
  const r = resolvePath(ctx.runtime.root, input, argName);
  if (!r.exists) throw notFound(r.rel);
  let stat: Stats;
  try {
    stat = statSync(r.real);
  } catch {
    throw notFound(r.rel);
  }
  return { ...r, stat };
}

export function requireDirectory(e: Existing, tool: string): void {
  if (!e.stat.isDirectory()) {
    throw new ToolError(
      'NOT_A_DIRECTORY',
      `${e.rel} is a file, not a directory`,
      { path: e.rel },
      {
        retry: `read_file ${JSON.stringify({ path: e.rel })}`,
        suggestion: `${tool} takes a directory; read the file with read_file instead.`,
      },
    );
  }
}

export function isoTime(ms: number): string {
  return new Date(ms).toISOString();
}

export function humanBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

/** The engine's after-commit hook that keeps an edit for the operator's console, when it is on (patch/journal.ts). */
export function journalFor(
  ctx: ToolContext<'edits'>,
  tool: string,
): ((steps: readonly CommitStep[]) => void) | undefined {
  const journal = ctx.runtime.edits;
  if (!journal) return undefined;
  const who = ctx.principal.label ?? `${ctx.principal.kind}:${ctx.principal.id}`;
  return (steps) => void journal.record(who, tool, steps);
}
