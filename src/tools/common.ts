// Pieces several tools share: the argument schemas that repeat, resolving a path that must exist, and
// human-readable sizes for model-facing text.
import { statSync, type Stats } from 'node:fs';
import { z } from 'zod';
import { ToolError } from '../core/tool-error.js';
import { notFound, resolvePath, type ResolvedPath } from '../workspace/paths.js';
import type { ToolContext } from './define.js';

export const pathArg = (what: string) =>
  z
    .string()
    .describe(`${what}, relative to the workspace root (an absolute path inside the workspace is accepted).`);
export const includeHiddenArg = z
  .boolean()
  .default(false)
  .describe('Include entries whose name starts with a dot.');
export const includeIgnoredArg = z
  .boolean()
  .default(false)
  .describe(
    'Include git-ignored paths and the default excludes (.git, node_modules, dist, build, target, .venv, …).',
  );
export const globList = (what: string) => z.array(z.string()).max(100).optional().describe(what);

export interface Existing extends ResolvedPath {
  stat: Stats;
}

export function resolveExisting(ctx: ToolContext, input: string, argName = 'path'): Existing {
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
