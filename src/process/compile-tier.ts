// How V8 compiles this server's code (docs/benchmarks.md, "Compiled to the baseline tier at once"): each
// function goes straight to Sparkplug, V8's baseline compiler, when it is first compiled, instead of running
// in the interpreter until it has been called often enough. A client's first calls run code that only the
// warm-up ran before, once; interpreted, the first command of a fresh server took ~1.6 ms more. It costs
// ~3 MB of RSS and ~7 ms before the ready line. Unlike the heap flags (cli/heap-flags.ts), which V8 reads
// once when the heap is made, this one is read each time a function is compiled, so setting it from inside
// the process, before the server's code is loaded, takes effect (measured: the same gain as on the command
// line).
import { setFlagsFromString } from 'node:v8';

/** The flags, also given on the command line of the spawner helper (process/spawner/spawner.ts). */
export const COMPILE_FLAGS = ['--always-sparkplug'] as const;

/** Sets COMPILE_FLAGS for the functions compiled from now on. */
export function compileToBaseline(): void {
  for (const flag of COMPILE_FLAGS) setFlagsFromString(flag);
}
