// Parser for `git blame --line-porcelain`: per final line, a header `<sha> <orig> <final> [<count>]`, then
// `key value` lines (author, author-mail, author-time, author-tz, summary, previous, filename, boundary …),
// then the content prefixed by one TAB. Pure; a line cut by an output bound is dropped.

export const MAX_BLAME_CONTENT_CHARS = 4000;
const ZERO = /^0{40}(0{24})?$/;

export interface BlameLine {
  line: number;
  commit: string;
  orig_line: number;
  author: string;
  author_email: string;
  /** ISO 8601 in UTC. */
  author_time: string;
  summary: string;
  /** Path of the line in `commit`, when it differs from the blamed path (renames). */
  orig_path: string | null;
  boundary: boolean;
  /** The line is not committed yet (working-tree changes). */
  uncommitted: boolean;
  content: string;
}

const HEADER = /^([0-9a-f]{40,64}) (\d+) (\d+)(?: \d+)?$/;

export function parseBlamePorcelain(out: Buffer | string, blamedPath: string): BlameLine[] {
  const lines = (typeof out === 'string' ? out : out.toString('utf8')).split('\n');
  const result: BlameLine[] = [];
  let cur: Partial<BlameLine> & { filename?: string } = {};
  let inEntry = false;
  for (const l of lines) {
    if (!inEntry) {
      const m = HEADER.exec(l);
      if (!m) continue;
      cur = { commit: m[1]!, orig_line: Number(m[2]), line: Number(m[3]), boundary: false };
      inEntry = true;
      continue;
    }
    if (l.startsWith('\t')) {
      const content = l.slice(1);
      const author = cur.author ?? '';
      const time = Number(cur.author_time ?? 0);
      result.push({
        line: cur.line!,
        commit: cur.commit!,
        orig_line: cur.orig_line!,
        author,
        author_email: (cur.author_email ?? '').replace(/^<|>$/g, ''),
        author_time: new Date(time * 1000).toISOString(),
        summary: cur.summary ?? '',
        orig_path: cur.filename !== undefined && cur.filename !== blamedPath ? cur.filename : null,
        boundary: cur.boundary ?? false,
        uncommitted: ZERO.test(cur.commit!),
        content:
          content.length > MAX_BLAME_CONTENT_CHARS ? content.slice(0, MAX_BLAME_CONTENT_CHARS) : content,
      });
      inEntry = false;
      continue;
    }
    const sp = l.indexOf(' ');
    const key = sp < 0 ? l : l.slice(0, sp);
    const value = sp < 0 ? '' : l.slice(sp + 1);
    switch (key) {
      case 'author':
        cur.author = value;
        break;
      case 'author-mail':
        cur.author_email = value;
        break;
      case 'author-time':
        cur.author_time = value;
        break;
      case 'summary':
        cur.summary = value;
        break;
      case 'filename':
        cur.filename = value;
        break;
      case 'boundary':
        cur.boundary = true;
        break;
    }
  }
  return result;
}
