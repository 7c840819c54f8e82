// Descriptors the server inherited from whoever started it (docs/security-model.md#descriptors): a shell's
// `200>>outside.log 300<canary`, a launcher's stray pipe, a terminal. Every child the server starts
// would get them too (Node's spawn, bubblewrap and node-pty pass on whatever is not close-on-exec), so a
// command could write into that file or inject keystrokes into that terminal (TIOCSTI). Closed once, first
// thing at start: how they are told apart from the server's own is that Node and libuv open every descriptor
// of theirs close-on-exec (O_CLOEXEC, EPOLL_CLOEXEC, EFD_CLOEXEC, SOCK_CLOEXEC), while one that survived the
// exec into this process cannot be — the kernel's /proc/self/fdinfo/N reports the flag. So: every descriptor
// above 2 without O_CLOEXEC is an inherited one, and is closed. Node has no fcntl() to mark it instead.
import { closeSync, readdirSync, readFileSync } from 'node:fs';

/** O_CLOEXEC as /proc/self/fdinfo's octal `flags:` shows it (Linux, every architecture Node runs on). */
const O_CLOEXEC = 0o2000000;

/** The descriptors above 2 this process holds without close-on-exec (Linux; none where /proc is absent). */
export function inheritedDescriptors(): number[] {
  let names: string[];
  try {
    names = readdirSync('/proc/self/fd');
  } catch {
    return [];
  }
  const out: number[] = [];
  for (const name of names) {
    const fd = Number(name);
    if (!Number.isInteger(fd) || fd <= 2) continue;
    const flags = fdFlags(fd);
    if (flags !== undefined && (flags & O_CLOEXEC) === 0) out.push(fd);
  }
  return out.sort((a, b) => a - b);
}

function fdFlags(fd: number): number | undefined {
  try {
    const m = /^flags:\s*([0-7]+)$/m.exec(readFileSync(`/proc/self/fdinfo/${fd}`, 'latin1'));
    return m ? parseInt(m[1] as string, 8) : undefined;
  } catch {
    return undefined; // the directory's own descriptor, closed since it was listed
  }
}

/** Closes every inherited descriptor above 2; returns which (for the log). */
export function closeInheritedDescriptors(): number[] {
  const fds = inheritedDescriptors();
  for (const fd of fds) {
    try {
      closeSync(fd);
    } catch {
      /* closed meanwhile */
    }
  }
  return fds;
}
