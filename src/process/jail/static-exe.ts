// Whether a program needs nothing of the system to run (jail.ts's one-directory jail for ripgrep): read from its
// ELF header, never by running it.
import { closeSync, openSync, readSync } from 'node:fs';

/** An ELF executable without a program interpreter (PT_INTERP): it needs no loader and no libraries. */
export function isStaticExecutable(file: string): boolean {
  let fd: number | undefined;
  try {
    fd = openSync(file, 'r');
    const head = Buffer.alloc(64);
    // 64-bit, little-endian ELF only; anything else is taken as needing the system.
    if (readSync(fd, head, 0, 64, 0) !== 64 || head.readUInt32BE(0) !== 0x7f454c46) return false;
    if (head[4] !== 2 || head[5] !== 1) return false;
    const phoff = Number(head.readBigUInt64LE(0x20));
    const size = head.readUInt16LE(0x36);
    const count = head.readUInt16LE(0x38);
    if (size < 4 || count === 0 || count > 256) return false;
    const table = Buffer.alloc(size * count);
    if (readSync(fd, table, 0, table.length, phoff) !== table.length) return false;
    for (let i = 0; i < count; i++) if (table.readUInt32LE(i * size) === 3) return false; // PT_INTERP
    return true;
  } catch {
    return false;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
