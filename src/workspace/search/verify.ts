// ripgrep walks by path, so a directory swapped for a symlink while it runs could make it read a file outside
// the workspace. Before any rg result is used, every line it reported (match and context) is read again
// through a descriptor verified to be inside the workspace (confined-fs) and compared; one mismatch means the
// tree changed under the search, and the caller then answers from the JS engine, whose walk is
// descriptor-based. So no byte, name or count from outside the workspace can reach a result.
import { close, read } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { openRegular } from '../confined-fs.js';
import type { WorkspaceRoot } from '../paths.js';
import type { SearchMatch } from './types.js';

const readAsync = promisify(read);
const closeAsync = promisify(close);

/** Lines a file must hold: line number → the preview rg showed for it. */
type Expected = Map<number, string>;

function expectedByFile(matches: readonly SearchMatch[]): Map<string, Expected> {
  const byFile = new Map<string, Expected>();
  for (const m of matches) {
    let exp = byFile.get(m.path);
    if (!exp) byFile.set(m.path, (exp = new Map()));
    exp.set(m.line, m.preview);
    m.before.forEach((t, i) => exp.set(m.line - m.before.length + i, t));
    m.after.forEach((t, i) => exp.set(m.line + 1 + i, t));
  }
  return byFile;
}

/** A regular file's bytes, read through a descriptor verified inside the workspace; undefined if refused. */
export async function readVerified(root: WorkspaceRoot, abs: string): Promise<Buffer | undefined> {
  let opened;
  try {
    opened = openRegular(root.real, abs);
  } catch {
    return undefined;
  }
  try {
    const size = Number(opened.stat.size);
    const buf = Buffer.allocUnsafe(size);
    let got = 0;
    while (got < size) {
      const { bytesRead } = await readAsync(opened.fd, buf, got, size - got, got);
      if (bytesRead === 0) break;
      got += bytesRead;
    }
    return buf.subarray(0, got);
  } finally {
    await closeAsync(opened.fd);
  }
}

function fileHolds(buf: Buffer, exp: Expected, preview: (line: Buffer) => string): boolean {
  const last = Math.max(...exp.keys());
  let start = 0;
  for (let line = 1; line <= last; line++) {
    if (start > buf.length) return false;
    let end = buf.indexOf(10, start);
    if (end === -1) end = buf.length;
    const want = exp.get(line);
    if (want !== undefined && preview(buf.subarray(start, end)) !== want) return false;
    start = end + 1;
  }
  return true;
}

/** True when every reported line is, byte for byte as previewed, in a file verified inside the workspace. */
export async function matchesHold(
  root: WorkspaceRoot,
  matches: readonly SearchMatch[],
  preview: (line: Buffer) => string,
): Promise<boolean> {
  for (const [rel, exp] of expectedByFile(matches)) {
    const buf = await readVerified(root, path.join(root.lexical, rel));
    if (!buf || !fileHolds(buf, exp, preview)) return false;
  }
  return true;
}
