// list_dir's structured result (src/tools/files/list_dir.ts) flattened back into one entry per name, for tests
// that ask "which entries, of which type": `dirs`, `files` (name → size), `links` (name → target), `other`,
// `modified` (name → time). Names are relative to the listed directory; `base` prefixes them (as workspace
// paths). The order is the name order (the listing's own order when sorted by name).
import { comparePaths } from '../../src/workspace/path-order.js';

export interface DirEntry {
  path: string;
  type: 'directory' | 'file' | 'symlink' | 'other';
  size_bytes?: number;
  symlink_target?: string;
  modified?: string;
}

/* eslint-disable @typescript-eslint/no-explicit-any -- a structured result as parsed from JSON */
export function dirEntries(sc: any, base = '.'): DirEntry[] {
  const p = (n: string) => (base === '.' ? n : `${base}/${n}`);
  const times = (sc?.modified ?? {}) as Record<string, string>;
  const out: DirEntry[] = [];
  const add = (name: string, e: Omit<DirEntry, 'path'>) =>
    out.push({ path: p(name), ...e, ...(times[name] ? { modified: times[name] } : {}) });
  for (const n of (sc?.dirs ?? []) as string[]) add(n, { type: 'directory' });
  for (const [n, size] of Object.entries((sc?.files ?? {}) as Record<string, number>))
    add(n, { type: 'file', size_bytes: size });
  for (const [n, t] of Object.entries((sc?.links ?? {}) as Record<string, string>))
    add(n, { type: 'symlink', symlink_target: t });
  for (const n of (sc?.other ?? []) as string[]) add(n, { type: 'other' });
  return out.sort((a, b) => comparePaths(a.path, b.path));
}

/** The entries' names in the order the text lists them (one line each; `(in dir/)` and `[...]` notes skipped). */
export function textOrder(text: string): string[] {
  return text
    .split('\n')
    .filter((l) => l && !l.startsWith('[') && !l.startsWith('(in '))
    .map((l) =>
      l
        .replace(/\/(\s.*)?$/, '')
        .replace(/ (->|\().*$/, '')
        .replace(/\s+\d{4}-\d\d-\d\dT\S+$/, ''),
    );
}
