// The server's own V8 heap settings, however it was started (docs/operations.md#memory). The bin's shebang,
// `npm start` and the Dockerfile pass NODE_FLAGS to node; `node dist/cli/main.js`, a process manager or a
// wrapper that runs node itself may not, and V8 reads the semi-space size only when the heap is made
// (v8.setFlagsFromString afterwards changes nothing: measured, docs/operations.md#memory). So the bin checks
// its own node flags first, before the server's code is loaded (cli/main.ts), and when one is missing runs
// node again with it: through process.execve where node has it (the same process, the same pid, the same
// descriptors), else as one child that inherits stdin, stdout and stderr, gets SIGINT, SIGTERM and SIGHUP
// forwarded, and whose exit code or signal this process ends with. The child has the flags in its execArgv,
// so it never relaunches again.
import { spawn } from 'node:child_process';
import { constants } from 'node:os';

/**
 * The V8 flags the server runs with (docs/operations.md#memory), written also in main.ts's shebang, package.json's
 * `start` and the Dockerfile (test/project/node-flags.test.ts keeps them equal): new space of 1 MB semi-spaces,
 * and an old space that grows by 30 % at a time instead of V8's default of up to 4×, which kept the peak under
 * 16 mixed clients at ~81 MB instead of ~115 MB. (`--optimize-for-size` held it at ~78 MB but cost 15–25 % more
 * CPU per call: bench/regression-bench.mjs.)
 */
export const NODE_FLAGS = ['--max-semi-space-size=1', '--heap-growing-percent=30'] as const;

/** The signals the waiting parent passes on to the server it started. */
const FORWARDED = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

const flagName = (arg: string) => (arg.split('=')[0] as string).replace(/_/g, '-');

/** The flags of NODE_FLAGS that `execArgv` does not set; one set to another value (the operator's choice) counts as set. */
export function missingHeapFlags(execArgv: readonly string[]): string[] {
  const set = new Set(execArgv.map(flagName));
  return NODE_FLAGS.filter((f) => !set.has(flagName(f)));
}

type Execve = (file: string, args: readonly string[]) => never;

/**
 * True when this process goes on to serve: its heap flags are in force. Otherwise this process has been
 * replaced by node with the flags (execve does not return) or waits for that node as its child and ends as
 * it ends; the caller then loads nothing more.
 */
export function relaunchWithHeapFlags(): boolean {
  const missing = missingHeapFlags(process.execArgv);
  if (missing.length === 0) return true;
  const args = [...missing, ...process.execArgv, ...process.argv.slice(1)];
  const execve = (process as unknown as { execve?: Execve }).execve;
  if (typeof execve === 'function' && process.platform !== 'win32') {
    try {
      execve.call(process, process.execPath, [process.execPath, ...args]);
    } catch {
      // Not replaced (a sandbox that forbids execve, say): run it as a child instead.
    }
  }
  runAsChild(args);
  return false;
}

function runAsChild(args: readonly string[]): void {
  const child = spawn(process.execPath, args, { stdio: 'inherit' });
  for (const s of FORWARDED) process.on(s, () => void child.kill(s));
  child.on('error', (e) => {
    process.stderr.write(
      `workbench-mcp: cannot start node again with ${NODE_FLAGS.join(' ')} (${e.message}); start it as ` +
        `node ${NODE_FLAGS.join(' ')} dist/cli/main.js instead\n`,
    );
    process.exit(1);
  });
  child.on('exit', (code, signal) => {
    if (code !== null || !signal) return process.exit(code ?? 1);
    // Ended by a signal: end by the same one, as a shell or process manager expects.
    for (const s of FORWARDED) process.removeAllListeners(s);
    process.kill(process.pid, signal);
    setImmediate(() => process.exit(128 + (constants.signals[signal] ?? 0)));
  });
}
