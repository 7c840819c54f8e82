// Where ripgrep runs with more of the host in view than the workspace (no sandbox, or a jail with the system's
// files) it walks by path, so a directory swapped for a symlink while it runs could make it read a file
// outside the workspace. Before a page of its results is used, every line on the page (match and context) is
// re-read at the byte offset rg gave for it, through a descriptor verified to be inside the workspace
// (confined-fs), and compared byte for byte (as far as a preview shows). A match whose lines do not hold is
// left off the page silently: the answer never depends on what an outside file contains, and the engine never
// changes (docs/security-model.md). The cost is one small positioned read per line shown. Where rg saw the
// workspace alone, only a match past the printed part of a long line is read again, for its exact column.
import { closeSync, readSync } from 'node:fs';
import path from 'node:path';
import { openRegular } from '../confined-fs.js';
import type { WorkspaceRoot } from '../paths.js';
import type { Candidate } from './match-page.js';
import type { LineProof } from './types.js';

/** A line rg reported: its file, byte offset, and the first bytes of it that any preview can show. */

/**
 * Synchronous on purpose: the lines were just read by rg, so they are in the page cache, and a thread-pool
 * round trip per line would cost more than the read (as in read_file). A page is at most a few hundred lines.
 */
function linesHold(fd: number, lines: readonly LineProof[]): boolean {
  for (const p of lines) {
    const got = Buffer.allocUnsafe(p.head.length);
    if (readSync(fd, got, 0, got.length, p.offset) !== got.length || !got.equals(p.head)) return false;
  }
  return true;
}

const COUNT_CHUNK = 64 * 1024;

/** Code points in the file's bytes [from, to): every byte that is not a UTF-8 continuation byte. */
function codePointsIn(fd: number, from: number, to: number): number {
  const buf = Buffer.allocUnsafe(Math.min(COUNT_CHUNK, Math.max(0, to - from)));
  let n = 0;
  for (let at = from; at < to;) {
    const got = readSync(fd, buf, 0, Math.min(buf.length, to - at), at);
    if (got <= 0) break;
    for (let i = 0; i < got; i++) if (((buf[i] as number) & 0xc0) !== 0x80) n++;
    at += got;
  }
  return n;
}

/** A match past the printed part of a long line gets its exact column from the file (types.ts LineProof). */
function finishColumn(fd: number, c: Candidate): void {
  const col = c.proofs?.[0]?.column;
  if (col) c.match.column = col.base + codePointsIn(fd, col.from, col.to) + 1;
}

/**
 * The page's candidates whose every reported line is, at its offset, in a file verified inside the workspace.
 * `all` false: rg saw nothing but the workspace, so only the candidates that need their column are read.
 */
export function verifiedPage(root: WorkspaceRoot, page: readonly Candidate[], all = true): Candidate[] {
  const byFile = new Map<string, Candidate[]>();
  for (const c of page) {
    if (!all && !c.proofs?.[0]?.column) continue;
    const list = byFile.get(c.match.path);
    if (list) list.push(c);
    else byFile.set(c.match.path, [c]);
  }
  const bad = new Set<Candidate>();
  for (const [rel, list] of byFile) {
    let fd: number;
    try {
      fd = openRegular(root.real, path.join(root.lexical, rel)).fd;
    } catch {
      list.forEach((c) => bad.add(c));
      continue;
    }
    try {
      for (const c of list) {
        if (!linesHold(fd, c.proofs ?? [])) bad.add(c);
        else finishColumn(fd, c);
      }
    } finally {
      closeSync(fd);
    }
  }
  return bad.size ? page.filter((c) => !bad.has(c)) : [...page];
}
