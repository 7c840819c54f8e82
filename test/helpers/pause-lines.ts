// Reading a server's pause points (src/core/pause.ts) from its standard error: each armed point reached writes
// `wb-test-pause <point>` on a line of its own, and a chunk of output may end in the middle of that line.

/** A handler for standard error's chunks that calls `onPause` with each point reached, once per whole line. */
export function pauseLineReader(onPause: (point: string) => void): (chunk: Buffer) => void {
  let partial = '';
  return (chunk) => {
    const lines = (partial + chunk.toString()).split('\n');
    partial = lines.pop() ?? '';
    for (const l of lines) {
      const m = /^wb-test-pause (\S+)$/.exec(l);
      if (m) onPause(m[1] as string);
    }
  };
}
