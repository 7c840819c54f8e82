// Reading markdown as GitHub renders it, for the documentation tests: the anchors its headings get and the
// links of its prose (code blocks and inline code hold no links).

/** Markdown without fenced code blocks and inline code, where link-like text is not a link. */
export function prose(md: string): string {
  return md.replace(/^(```|~~~)[\s\S]*?^\1[^\n]*$/gm, '').replace(/`[^`\n]*`/g, '');
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
export function anchors(md: string): Set<string> {
  const out = new Set<string>();
  const seen = new Map<string, number>();
  for (const m of md.replace(/^(```|~~~)[\s\S]*?^\1[^\n]*$/gm, '').matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = (m[1] as string)
      .replace(/<[^>]+>/g, '')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\p{M}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  for (const m of md.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) out.add(m[1] as string);
  return out;
}

export function links(md: string): string[] {
  const out: string[] = [];
  for (const m of prose(md).matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) out.push(m[1] as string);
  for (const m of prose(md).matchAll(/^\[[^\]]+\]:\s*(\S+)/gm)) out.push(m[1] as string);
  return out;
}
