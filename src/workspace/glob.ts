// One glob meaning everywhere (tool-contract "Paths", decisions.md 21): a pattern with a `/` matches the whole
// path relative to the listing/search base; a pattern without one matches the basename at any depth (as in
// .gitignore and ripgrep's -g). `**` spans zero or more directories, so `**/*` includes files at the base;
// `*` never crosses `/`. Hidden entries are decided elsewhere, so dots are matched like any character.
import picomatch from 'picomatch';

export type Matcher = (relPath: string) => boolean;

const OPTIONS = { dot: true } as const;

function compileOne(pattern: string): Matcher {
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
