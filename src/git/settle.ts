// How long a file must have stood unchanged before what was read of it may be cached under its signature
// (git/repo's discovery, git/confine's listings). A change after the read must change the timestamps, so the
// file's last change must lie further back than the file system's timestamp step: at most a kernel tick
// (≤ 10 ms) where the file system keeps fractions of a second, a second or two where it keeps whole seconds
// (ext3, FAT, some network mounts) — told apart by the ctime, which no user can set: a ctime on a whole second
// is taken for a coarse file system (rarely wrong, and then only in the cautious direction).

/** The wait where timestamps step by whole seconds. */
export const COARSE_STABLE_MS = 2000;
/** The wait where they step by a kernel tick at most. */
export const FINE_STABLE_MS = 100;

const SECOND_NS = 1_000_000_000n;

/** Whether a file with these times had stood still for its file system's wait at `startedMs` (ms since the epoch). */
export function stoodStill(st: { mtimeNs: bigint; ctimeNs: bigint }, startedMs: number): boolean {
  const wait = st.ctimeNs % SECOND_NS === 0n ? COARSE_STABLE_MS : FINE_STABLE_MS;
  const before = BigInt(Math.floor(startedMs - wait)) * 1_000_000n;
  return st.mtimeNs < before && st.ctimeNs < before;
}
