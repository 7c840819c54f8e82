// ripgrep walks by path, so a directory swapped for a symlink while it runs could make it read a file outside
// the workspace. Before any rg result is used, every line it reported (match and context) is re-read at the
// byte offset rg gave for it, through a descriptor verified to be inside the workspace (confined-fs), and
// compared byte for byte (as far as a preview shows). One mismatch means the tree changed under the search,
// and the caller then answers from the JS engine, whose walk is descriptor-based. So no byte, name or count
// from outside the workspace can reach a result. The cost is one small positioned read per reported line.
import { close, closeSync, read, readSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { openRegular } from '../confined-fs.js';
import type { WorkspaceRoot } from '../paths.js';

const readAsync = promisify(read);
const closeAsync = promisify(close);

/** A line rg reported: its file, byte offset, and the first bytes of it that any preview can show. */
export interface LineProof {
  rel: string;
  offset: number;
  head: Buffer;
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

/**
 * Synchronous on purpose: the lines were just read by rg, so they are in the page cache, and a thread-pool
 * round trip per line would cost more than the read (as in read_file).
 */
function fileHolds(root: WorkspaceRoot, rel: string, lines: readonly LineProof[]): boolean {
  let opened;
  try {
    opened = openRegular(root.real, path.join(root.lexical, rel));
  } catch {
    return false;
  }
  try {
    for (const p of lines) {
      const got = Buffer.allocUnsafe(p.head.length);
      if (readSync(opened.fd, got, 0, got.length, p.offset) !== got.length || !got.equals(p.head))
        return false;
    }
    return true;
  } finally {
    closeSync(opened.fd);
  }
}

/** True when every reported line is, byte for byte at its offset, in a file verified inside the workspace. */
export function proofsHold(root: WorkspaceRoot, proofs: readonly LineProof[]): boolean {
  const byFile = new Map<string, LineProof[]>();
  for (const p of proofs) {
    const list = byFile.get(p.rel);
    if (list) list.push(p);
    else byFile.set(p.rel, [p]);
  }
  for (const [rel, lines] of byFile) if (!fileHolds(root, rel, lines)) return false;
  return true;
}
