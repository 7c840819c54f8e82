// How V8 compiles this server's code (docs/benchmarks.md, "Compiled to the baseline tier at once"): each
// function goes straight to Sparkplug, V8's baseline compiler, when it is first compiled, instead of running
// in the interpreter until it has been called often enough. A client's first calls run code that only the
// warm-up ran before, once; interpreted, the first command of a fresh server took ~1.6 ms more. It costs
// ~3 MB of RSS and ~7 ms before the ready line. Unlike the heap flags (cli/heap-flags.ts), which V8 reads
// once when the heap is made, this one is read each time a function is compiled, so setting it from inside
// the process, before the server's code is loaded, takes effect (measured: the same gain as on the command
// line). Also the path helpers V8 optimizes during the warm-up (warmPathHelpers, below).
import path from 'node:path';
import { setFlagsFromString } from 'node:v8';

/** The flags, also given on the command line of the spawner helper (process/spawner/spawner.ts). */
export const COMPILE_FLAGS = ['--always-sparkplug'] as const;

/** Sets COMPILE_FLAGS for the functions compiled from now on. */
export function compileToBaseline(): void {
  for (const flag of COMPILE_FLAGS) setFlagsFromString(flag);
}

/**
 * Calls of node:path's resolve and relative after which V8 has them compiled by TurboFan (warmPathHelpers): 500
 * were enough in a fresh node, and the server has made ~800 of its own by then.
 */
export const PATH_HELPER_CALLS = 1000;

/**
 * Runs node:path's `resolve` and `relative` often enough that V8 compiles them with TurboFan during the warm-up
 * (cli/warm-up.ts; docs/benchmarks.md, "V8's compiles during a call"). The start-up called them about 1,500 times
 * (the sandbox's mounts, once per PATH entry among others; ~800 since the mounts compare strings), so with a
 * longer PATH (`npm start`'s) they turned hot in a client's first calls, and compiling `resolve` (~3 ms on a
 * worker thread) delayed the call it coincided with by as much on two CPUs (apply_patch 6–8 ms instead of ~3).
 * 4–10 ms of this thread.
 */
export function warmPathHelpers(root: string): void {
  for (let i = 0; i < PATH_HELPER_CALLS; i++) {
    path.resolve(root, 'src', String(i % 7), '..', 'a.js');
    path.relative(root, '/usr/lib');
  }
}
