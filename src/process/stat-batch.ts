// The lstat of many workspace files in one request (docs/tools.md#limits): native/wb-stat, started on first use
// with the workspace's root directory as its descriptor 3, stats each path beneath that descriptor with
// openat2's RESOLVE_BENEATH and RESOLVE_NO_SYMLINKS (the kernel refuses a path that leaves the root or passes a
// symlink, and the last component is never followed), so a page of a listing costs one round trip instead of
// an lstat per file through /proc/self/fd (walk.ts). A request is written the moment it is made, before earlier
// ones are answered: the helper answers them in order while the walk that asked goes on, on the other core (a
// walk does not yield to the event loop between its batches). Where the program was not
// built, cannot start, or the kernel lacks openat2, `stat` rejects and the caller stats by itself; a helper that
// failed is not started again. It holds nothing but the root's descriptor, and is killed at shutdown. It runs
// outside every sandbox, so it is started from the copy placed at start-up (native.ts), never from dist/.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, constants, openSync } from 'node:fs';
import type { Socket } from 'node:net';

export type BriefKind = 'file' | 'directory' | 'symlink' | 'other';

/** What a listing needs of an lstat. */
export interface BriefStat {
  kind: BriefKind;
  size: number;
  mtimeMs: number;
}

const KINDS: ReadonlyArray<BriefKind | undefined> = [undefined, 'file', 'directory', 'symlink', 'other'];
const RECORD = 24;
/** Paths per request at most (a request of 64 K paths is ~4 MB). */
export const MAX_BATCH = 65_536;

interface Pending {
  count: number;
  resolve: (v: Array<BriefStat | undefined>) => void;
  reject: (e: Error) => void;
}

function request(paths: readonly string[]): Buffer {
  let len = 0;
  for (const p of paths) len += Buffer.byteLength(p) + 1;
  const out = Buffer.allocUnsafe(12 + len);
  out.write('WBS1', 0, 'latin1');
  out.writeUInt32LE(len, 4);
  out.writeUInt32LE(paths.length, 8);
  let at = 12;
  for (const p of paths) {
    at += out.write(p, at);
    out[at++] = 0;
  }
  return out;
}

function records(answer: Buffer, count: number): Array<BriefStat | undefined> {
  const out: Array<BriefStat | undefined> = [];
  for (let i = 0; i < count; i++) {
    const at = 8 + i * RECORD;
    const kind = KINDS[answer[at] ?? 0];
    // The size as two halves: exact below 2^53, and no BigInt per file.
    const size = answer.readUInt32LE(at + 8) + answer.readInt32LE(at + 12) * 0x1_0000_0000;
    out.push(kind && { kind, size, mtimeMs: answer.readDoubleLE(at + 16) });
  }
  return out;
}

export class StatBatch {
  private child: ChildProcess | undefined;
  private failed: string | undefined;
  /** Requests written and not yet answered, oldest first; the helper answers in the order it was asked. */
  private readonly pending: Pending[] = [];
  /** Answer bytes read and not yet handed out. */
  private chunks: Buffer[] = [];
  private bytes = 0;

  /** `program`: wb-stat as placed in the runtime directory (native.ts placeProgram); undefined: none. */
  constructor(
    private readonly rootReal: string,
    private readonly program: string | undefined,
  ) {}

  /** Why batches are not available (undefined: they are, or may be once started). */
  get unavailable(): string | undefined {
    return this.program ? this.failed : 'native/wb-stat was not built';
  }

  /**
   * lstat of each path (relative to the root, as a walk reports them), in order; undefined where a path cannot
   * be stat'ed. Rejects when no helper can answer; the caller then stats by itself.
   */
  stat(paths: readonly string[]): Promise<Array<BriefStat | undefined>> {
    if (paths.length > MAX_BATCH) return Promise.reject(new Error(`more than ${MAX_BATCH} paths`));
    const why = this.unavailable;
    if (why) return Promise.reject(new Error(why));
    if (paths.length === 0) return Promise.resolve([]);
    const child = this.child ?? this.start();
    if (!child) return Promise.reject(new Error(this.failed ?? 'wb-stat did not start'));
    return new Promise((resolve, reject) => {
      this.pending.push({ count: paths.length, resolve, reject });
      child.stdin?.write(request(paths));
    });
  }

  close(): void {
    this.failed ??= 'closed';
    this.child?.kill('SIGKILL');
    this.child = undefined;
  }

  private start(): ChildProcess | undefined {
    let fd: number;
    try {
      fd = openSync(this.rootReal, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
    } catch (e) {
      this.failed = `the workspace root cannot be opened (${String(e)})`;
      return undefined;
    }
    let child: ChildProcess;
    try {
      child = spawn(this.program as string, [], { stdio: ['pipe', 'pipe', 'ignore', fd], env: {} });
    } catch (e) {
      this.failed = `wb-stat cannot start (${String(e)})`;
      return undefined;
    } finally {
      closeSync(fd);
    }
    child.stdout?.on('data', (c: Buffer) => this.onData(c));
    child.stdin?.on('error', () => {});
    child.on('error', (e) => this.fail(`wb-stat failed (${e.message})`));
    child.on('exit', (code, signal) =>
      this.fail(code === 3 ? 'the kernel lacks openat2' : `wb-stat ended (${signal ?? code})`),
    );
    // Neither the helper nor its pipes keep the server alive.
    child.unref();
    (child.stdin as Socket | null)?.unref();
    (child.stdout as Socket | null)?.unref();
    this.child = child;
    return child;
  }

  private onData(c: Buffer): void {
    this.chunks.push(c);
    this.bytes += c.length;
    for (let p = this.pending[0]; p; p = this.pending[0]) {
      const want = 8 + p.count * RECORD;
      if (this.bytes < want) return;
      const all = this.chunks.length === 1 ? (this.chunks[0] as Buffer) : Buffer.concat(this.chunks);
      const answer = all.subarray(0, want);
      if (answer.toString('latin1', 0, 4) !== 'WBS1' || answer.readUInt32LE(4) !== p.count)
        return this.fail('wb-stat answered in a wrong shape');
      this.pending.shift();
      this.bytes -= want;
      this.chunks = this.bytes ? [all.subarray(want)] : [];
      p.resolve(records(answer, p.count));
    }
    if (this.bytes) this.fail('wb-stat answered what was not asked');
  }

  private fail(why: string): void {
    this.failed ??= why;
    for (const p of this.pending.splice(0)) p.reject(new Error(why));
    this.chunks = [];
    this.bytes = 0;
    this.child?.kill('SIGKILL');
    this.child = undefined;
  }
}
