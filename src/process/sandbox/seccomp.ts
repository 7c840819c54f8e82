// The seccomp filter every sandboxed program runs under (docs/security-model.md): a classic BPF program,
// assembled here and handed to bubblewrap (`--seccomp FD`), so no native module is needed. It refuses what the
// namespaces alone leave open to a command on a root server or to a command that wants to reach another one:
// - creating setuid/setgid files: the chmod family, open/openat/creat with O_CREAT or O_TMPFILE whose mode has
//   S_ISUID or S_ISGID, mknod/mknodat with them (a command runs as its server's user, root included, and owns
//   what it writes; a setuid file left in the workspace would be a door for every local user) → EPERM;
// - ptrace, process_vm_readv/writev and pidfd_getfd (reading or steering another process) → EPERM;
// - io_uring (its operations bypass this filter) and openat2 (its flags sit in a struct the filter cannot read;
//   C libraries fall back to openat) → ENOSYS;
// - any system call of another ABI (i386 or x32 on x86_64), whose numbers differ → ENOSYS;
// - with `noInet` (the Landlock sandbox in `safe` and `trusted`, sandbox-landlock.ts, which has no network namespace):
//   socket(2) of AF_INET or AF_INET6, whatever the type (Landlock's network rules cover TCP only) → EACCES.
// Everything else is allowed: the namespaces, mounts and dropped capabilities of sandbox.ts do the rest.
import { writeFileSync } from 'node:fs';
import path from 'node:path';

/** Architectures this filter knows the system call numbers of (others run without it, and say so). */
type Arch = 'x64' | 'arm64';

const AUDIT_ARCH: Record<Arch, number> = { x64: 0xc000003e, arm64: 0xc00000b7 };

interface SyscallTable {
  /** `[number, index of the mode argument]` */
  modeAt: Array<[number, number]>;
  /** `[number, index of the flags argument, index of the mode argument]` */
  createAt: Array<[number, number, number]>;
  eperm: number[];
  enosys: number[];
  socket: number;
}

const TABLES: Record<Arch, SyscallTable> = {
  x64: {
    // chmod, fchmod, fchmodat, fchmodat2, creat (mode at 1; creat always creates), mknod, mknodat
    modeAt: [
      [90, 1],
      [91, 1],
      [268, 2],
      [452, 2],
      [85, 1],
      [133, 1],
      [259, 2],
    ],
    // open, openat
    createAt: [
      [2, 1, 2],
      [257, 2, 3],
    ],
    // ptrace, process_vm_readv, process_vm_writev, pidfd_getfd
    eperm: [101, 310, 311, 438],
    // openat2, io_uring_setup, io_uring_enter, io_uring_register
    enosys: [437, 425, 426, 427],
    socket: 41,
  },
  arm64: {
    // fchmod, fchmodat, fchmodat2, mknodat
    modeAt: [
      [52, 1],
      [53, 2],
      [452, 2],
      [33, 2],
    ],
    // openat
    createAt: [[56, 2, 3]],
    eperm: [117, 270, 271, 438],
    enosys: [437, 425, 426, 427],
    socket: 198,
  },
};

const O_CREAT = 0o100;
const O_TMPFILE = 0o20000000;
const S_ISUID_ISGID = 0o6000;
const X32_SYSCALL_BIT = 0x40000000;

const RET_ALLOW = 0x7fff0000;
const RET_ERRNO = 0x00050000;
const EPERM = 1;
const EACCES = 13;
const ENOSYS = 38;
const AF_INET = 2;
const AF_INET6 = 10;

// Classic BPF opcodes.
const LD_W_ABS = 0x20;
const JEQ_K = 0x15;
const JGE_K = 0x35;
const JSET_K = 0x45;
const RET_K = 0x06;

/** Offsets in `struct seccomp_data` (little-endian: the low word of an argument comes first). */
const NR = 0;
const ARCH = 4;
const argLow = (i: number) => 16 + 8 * i;

/** One instruction; a jump names labels, resolved once the program is laid out. */
interface Insn {
  code: number;
  k: number;
  jt?: string;
  jf?: string;
  label?: string;
}

/**
 * Write the filter for this machine into `dir` (the instance's runtime directory, which no sandbox can
 * write) once, read-only; its path, or undefined on an architecture the filter does not know.
 */
export function writeSeccompFilter(dir: string, opts: FilterOptions = {}): string | undefined {
  const arch = seccompArch();
  if (!arch) return undefined;
  const file = path.join(dir, opts.noInet ? 'seccomp-noinet.bpf' : 'seccomp.bpf');
  try {
    writeFileSync(file, seccompProgram(arch, opts), { mode: 0o400, flag: 'wx' });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
  }
  return file;
}

/** The arch this process can filter for, or undefined. */
export function seccompArch(arch: string = process.arch): Arch | undefined {
  return arch === 'x64' || arch === 'arm64' ? arch : undefined;
}

export interface FilterOptions {
  /** Also refuse socket(2) for AF_INET and AF_INET6 (EACCES). */
  noInet?: boolean;
}

/** The filter program for `arch`, as the bytes bubblewrap reads (`struct sock_filter[]`). */
export function seccompProgram(arch: Arch, opts: FilterOptions = {}): Buffer {
  const t = TABLES[arch];
  const p: Insn[] = [];
  const at = (label: string, insn: Insn) => p.push({ ...insn, label });
  const allow: Insn = { code: RET_K, k: RET_ALLOW };
  p.push({ code: LD_W_ABS, k: ARCH });
  p.push({ code: JEQ_K, k: AUDIT_ARCH[arch], jf: 'enosys' });
  p.push({ code: LD_W_ABS, k: NR });
  if (arch === 'x64') p.push({ code: JGE_K, k: X32_SYSCALL_BIT, jt: 'enosys' });
  for (const [nr, mode] of t.modeAt) p.push({ code: JEQ_K, k: nr, jt: `mode${mode}` });
  for (const [nr, flags, mode] of t.createAt) p.push({ code: JEQ_K, k: nr, jt: `create${flags}.${mode}` });
  for (const nr of t.eperm) p.push({ code: JEQ_K, k: nr, jt: 'eperm' });
  for (const nr of t.enosys) p.push({ code: JEQ_K, k: nr, jt: 'enosys' });
  if (opts.noInet) p.push({ code: JEQ_K, k: t.socket, jt: 'socket' });
  p.push(allow);
  if (opts.noInet) {
    at('socket', { code: LD_W_ABS, k: argLow(0) });
    p.push({ code: JEQ_K, k: AF_INET, jt: 'eacces' }, { code: JEQ_K, k: AF_INET6, jt: 'eacces' }, allow);
  }
  // Jumps only go forward: each block ends in its own allow.
  for (const [, flags, mode] of t.createAt) {
    const label = `create${flags}.${mode}`;
    if (p.some((i) => i.label === label)) continue;
    at(label, { code: LD_W_ABS, k: argLow(flags) });
    p.push({ code: JSET_K, k: O_CREAT | O_TMPFILE, jt: `mode${mode}` }, allow);
  }
  const modes = new Set([...t.modeAt.map(([, m]) => m), ...t.createAt.map(([, , m]) => m)]);
  for (const m of modes) {
    at(`mode${m}`, { code: LD_W_ABS, k: argLow(m) });
    p.push({ code: JSET_K, k: S_ISUID_ISGID, jt: 'eperm' }, allow);
  }
  at('eperm', { code: RET_K, k: RET_ERRNO | EPERM });
  at('eacces', { code: RET_K, k: RET_ERRNO | EACCES });
  at('enosys', { code: RET_K, k: RET_ERRNO | ENOSYS });
  return assemble(p);
}

function assemble(p: Insn[]): Buffer {
  const where = new Map<string, number>();
  p.forEach((insn, i) => insn.label && where.set(insn.label, i));
  const out = Buffer.alloc(p.length * 8);
  p.forEach((insn, i) => {
    const rel = (label: string | undefined) => {
      if (label === undefined) return 0;
      const to = where.get(label);
      if (to === undefined || to <= i || to - i - 1 > 255) throw new Error(`seccomp: bad jump to ${label}`);
      return to - i - 1;
    };
    out.writeUInt16LE(insn.code, i * 8);
    out.writeUInt8(rel(insn.jt), i * 8 + 2);
    out.writeUInt8(rel(insn.jf), i * 8 + 3);
    out.writeUInt32LE(insn.k >>> 0, i * 8 + 4);
  });
  return out;
}
