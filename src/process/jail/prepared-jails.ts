// The tool jails prepared ahead of git and ripgrep (prepared-jail.ts; docs/security-model.md#tool-jails-prepared-ahead):
// one per program (two for git: git_show runs two at once, and a first discovery two in a row), asked for again as each run ends and at start
// (cli/warm-up.ts). Which jail a call needs comes from jail.ts (`shape`); this file only matches and refills.
import { closeSync, fstatSync, openSync, constants } from 'node:fs';
import path from 'node:path';
import type { DirIdentity } from '../start-request.js';
import { handOver, JailSlot, type JailRecipe, type JailRun, type PreparedCounts } from './prepared-jail.js';

/** The jail one call of a program needs: its key, how to build one like it, where the program starts in it. */
export interface JailShape {
  key: string;
  recipe: () => JailRecipe | undefined;
  /** The program's directory as the jail sees it. */
  cwd: string;
  pin?: DirIdentity;
}

/** What a prepared start tells the server (a debug line: which program, whether a prepared jail served it). */
export type JailRunNote = (note: { program: string; prepared: boolean }) => void;

/** A start that could use a prepared jail: the one it used (if any), and what asks for the next once it ended. */
export interface PreparedStart {
  ready?: JailRun;
  refill: () => void;
}

/** At most this many programs get a prepared jail (git and ripgrep; a test's other programs). */
const MAX_SLOTS = 4;

export class PreparedJails {
  readonly counts: PreparedCounts = { prepared: 0, used: 0, discarded: 0, died: 0 };
  private readonly slots = new Map<string, JailSlot>();
  /** The directory ripgrep's jails of one directory bind: the last one searched (the workspace's root first). */
  private dir: { fd: number; id: DirIdentity } | undefined;
  private closed = false;

  constructor(
    private readonly note?: JailRunNote,
    private readonly defer: (fn: () => void) => void = setImmediate,
  ) {}

  /**
   * Takes the prepared jail for `shape` (killing those built otherwise). `refill`, called when the run has
   * ended, asks for the next through `defer`: not while the program runs nor before the answer is written, as
   * starting a process blocks the server's thread for a few milliseconds (more on a busy machine) that the call
   * would wait for (a call that comes first starts its own jail the usual way, JailSlot.take); git's depth of
   * two covers the next run of the same tool call.
   */
  start(
    program: string,
    args: readonly string[],
    env: Record<string, string>,
    shape: JailShape,
  ): PreparedStart | undefined {
    const slot = this.slotOf(program);
    if (!slot) return undefined;
    const got = slot.take(shape.key);
    this.note?.({ program, prepared: got !== undefined });
    const refill = () => {
      slot.later(shape.recipe);
      this.defer(() => slot.flush());
    };
    if (!got) return { refill };
    this.counts.used++;
    return {
      ready: handOver(got, { cwd: shape.cwd, argv: [program, ...args], env, pin: shape.pin }),
      refill,
    };
  }

  /** Prepares the jail of `program` now (at start), unless one is ready. */
  warm(program: string, shape: JailShape | undefined): void {
    if (shape) this.slotOf(program)?.fill(shape.recipe);
  }

  /**
   * The directory a jail of one directory binds, held open while such a jail may be prepared: `fd` (the call's,
   * still open) when it is another directory than the one held, which is then closed.
   */
  holdDir(fd: number): { fd: number; id: DirIdentity } | undefined {
    const id = identityOf(fd);
    if (!id) return undefined;
    if (this.dir && this.dir.id.dev === id.dev && this.dir.id.ino === id.ino) return this.dir;
    if (this.closed) return undefined;
    let own: number;
    try {
      own = openSync(`/proc/self/fd/${fd}`, constants.O_RDONLY | constants.O_DIRECTORY);
    } catch {
      return undefined;
    }
    if (this.dir) closeSync(this.dir.fd);
    this.dir = { fd: own, id };
    return this.dir;
  }

  /** The directory held now, if it is still `id` (a recipe binds only that one). */
  heldDir(id: DirIdentity): number | undefined {
    const d = this.dir;
    return d && d.id.dev === id.dev && d.id.ino === id.ino ? d.fd : undefined;
  }

  /** Shutdown: every prepared jail killed, none prepared again. */
  close(): void {
    this.closed = true;
    for (const s of this.slots.values()) s.close();
    if (this.dir) closeSync(this.dir.fd);
    this.dir = undefined;
  }

  private slotOf(program: string): JailSlot | undefined {
    let s = this.slots.get(program);
    if (!s && !this.closed && this.slots.size < MAX_SLOTS)
      this.slots.set(program, (s = new JailSlot(this.counts, path.basename(program) === 'git' ? 2 : 1)));
    return this.closed ? undefined : s;
  }
}

export function identityOf(fd: number): DirIdentity | undefined {
  try {
    const st = fstatSync(fd, { bigint: true });
    return { dev: st.dev, ino: st.ino };
  } catch {
    return undefined;
  }
}
