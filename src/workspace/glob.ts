// One glob meaning everywhere (docs/tools.md#paths, docs/design-notes.md#globs): a pattern with a `/` matches
// the whole path relative to the listing/search base; a pattern without one matches the basename at any depth
// (as in .gitignore and ripgrep's -g). `**` spans zero or more directories, so `**/*` includes files at the
// base; `*` never crosses `/`. Hidden entries are decided elsewhere, so dots are matched like any character.
import picomatch from 'picomatch';
import { ToolError } from '../core/tool-error.js';

export type Matcher = (relPath: string) => boolean;

const OPTIONS = { dot: true } as const;
const MAX_GLOB_CHARS = 4096;

/** Refuses what no file name matches and no argv can carry to ripgrep: a NUL, or more than 4096 characters. */
function check(pattern: string): void {
  if (pattern.includes('\0')) throw unusable(pattern, 'it contains a NUL character, which no file name has');
  if (pattern.length > MAX_GLOB_CHARS)
    throw unusable(pattern, `it is longer than ${MAX_GLOB_CHARS} characters`);
}

function unusable(pattern: string, why: string): ToolError {
  const shown = pattern.length > 80 ? `${JSON.stringify(pattern.slice(0, 80))}…` : JSON.stringify(pattern);
  return new ToolError(
    'INVALID_ARGUMENT',
    `glob pattern ${shown} is not usable: ${why.slice(0, 200)}`,
    { pattern: pattern.slice(0, 200) },
    { suggestion: 'Use a glob such as "*.ts", "src/**" or "docs/*.md", or leave the argument out.' },
  );
}

/** A pattern that cannot be compiled (`/` alone, too large for the engine) is INVALID_ARGUMENT, never a crash. */
function compileOne(pattern: string): Matcher {
  try {
    const m = compileNormalised(pattern);
    // V8 compiles a regular expression on its first use, once per kind of subject string: a pattern too large
    // for the engine throws there, so both kinds are compiled here, where the error is still an argument error.
    m('probe/a');
    m('probe/\u{1F600}');
    return m;
  } catch (e) {
    throw unusable(pattern, (e as Error).message);
  }
}

function compileNormalised(pattern: string): Matcher {
  let p = pattern.trim();
  if (p.startsWith('./')) p = p.slice(2);
  if (p.startsWith('/')) p = p.slice(1);
  if (p.endsWith('/')) p = p.slice(0, -1) + '/**';
  if (!p.includes('/')) {
    const m = picomatch(p, OPTIONS);
    return (rel) => m(rel.slice(rel.lastIndexOf('/') + 1));
  }
  return picomatch(p, OPTIONS);
}

/** Returns a matcher for the union of patterns, or undefined when there are none. */
export function compileGlobs(patterns: readonly string[] | undefined): Matcher | undefined {
  // Every pattern is checked, blank ones too: search_text hands them all to ripgrep.
  (patterns ?? []).forEach(check);
  const list = (patterns ?? []).filter((p) => p.trim().length > 0);
  if (list.length === 0) return undefined;
  const ms = list.map(compileOne);
  return (rel) => ms.some((m) => m(rel));
}

/** True when the file or any of its ancestor directories (all relative to the base) is excluded. */
export function excludedByAncestor(exclude: Matcher, rel: string): boolean {
  if (exclude(rel)) return true;
  let i = rel.indexOf('/');
  while (i >= 0) {
    if (exclude(rel.slice(0, i))) return true;
    i = rel.indexOf('/', i + 1);
  }
  return false;
}
