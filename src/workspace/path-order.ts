// The one order of workspace paths that listing, search and their continuations share: component by component,
// each name by Unicode code point (the order of its UTF-8 bytes, which is ripgrep's `--sort path` order too).
// A directory's whole subtree therefore sorts right after the directory and before its next sibling, so a walk
// that visits each directory's entries in name order yields paths in this order, and a continuation `after` a
// path can skip whole subtrees without entering them.

const SLASH = 47;

/** Code point order from UTF-16 units: surrogates (astral characters) sort above U+E000–U+FFFF. */
function unit(c: number): number {
  if (c === SLASH) return -1; // the separator sorts before every character: components compare first
  if (c < 0xd800) return c;
  return c >= 0xe000 ? c - 0x800 : c + 0x2000;
}

/** Negative, zero or positive as `a` sorts before, with or after `b` (`/`-separated relative paths). */
export function comparePaths(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return unit(x) < unit(y) ? -1 : 1;
  }
  return a.length - b.length;
}

/** True when `rel` and everything below it sort before `from` (a walk resuming at `from` skips it whole). */
export function wholeSubtreeBefore(rel: string, from: string): boolean {
  return comparePaths(rel, from) < 0 && !from.startsWith(`${rel}/`);
}

/** The name of `from`'s component directly below directory `dirRel` ('.' = root), if `from` lies below it. */
export function componentBelow(dirRel: string, from: string): string | undefined {
  const prefix = dirRel === '.' ? '' : `${dirRel}/`;
  if (!from.startsWith(prefix) || from.length === prefix.length) return undefined;
  const rest = from.slice(prefix.length);
  const slash = rest.indexOf('/');
  return slash < 0 ? rest : rest.slice(0, slash);
}
