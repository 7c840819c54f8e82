// The spawner helper: a small Node process that starts pipe commands for the server and relays their output
// and exit over IPC. Why: fork() copies the page tables of the process that calls it, so its cost grows with
// the server's memory (~3 ms per command at 100 MB, blocking the event loop); this process stays small.
// It loads pipes.ts and nothing else of the server, holds no state beyond the live commands, and exits when
// the server goes away. Output is flow-controlled: reading pauses while too many chunks wait to be sent. It runs
// outside every sandbox, beside the server: each command it starts is a bubblewrap sandbox of its own, in whose
// PID namespace this process does not exist. It answers the server's pings (spawner.ts watches it). It keeps
// at most KEPT_READY sandboxes prepared ahead (prepared-sandbox.ts), which a spawn that names one turns into its
// command.
import { adoptChild, spawnPipes, type PipeHandle } from '../spawn/pipes.js';
import { KEPT_READY, PreparedSandbox } from './prepared-sandbox.js';
import type { FromHelper, ToHelper } from './spawner-messages.js';

/** Chunks of one command allowed in flight on the IPC channel before its output is paused. */
const MAX_IN_FLIGHT = 16;

interface Live {
  handle: PipeHandle;
  inFlight: number;
  paused: boolean;
}

const live = new Map<number, Live>();
/** The sandboxes waiting for their command, by the server's number, oldest first. */
const prepared = new Map<number, PreparedSandbox>();
/**
 * Always with a callback: without one a write to a server that has just gone (EPIPE) is an 'error' event, which
 * would crash this helper with a stack trace; 'disconnect' follows and ends it quietly.
 */
const send = (msg: FromHelper, cb: (e: Error | null) => void = () => {}) => {
  if (process.connected) process.send?.(msg, undefined, undefined, cb);
};

/** Messages for commands whose prepared process is still moving into its cgroup (start), kept in order. */
const waiting = new Map<number, ToHelper[]>();

function start(m: Extract<ToHelper, { t: 'spawn' }>): void {
  // The one it names is still held back (prepare): started now it would only be slower than a start of its own.
  if (m.warm) unhold(m.warm.n);
  const named = m.warm && prepared.get(m.warm.n);
  if (!named) return launch(m, undefined);
  prepared.delete(named.n);
  waiting.set(m.id, []);
  named.whenPlaced((usable) => {
    const queued = waiting.get(m.id) ?? [];
    waiting.delete(m.id);
    if (!usable) named.discard();
    launch(m, usable ? named : undefined);
    for (const x of queued) handle(x);
  });
}

/** Start the command: in `ready` (prepared, in its cgroup) or the usual way. */
function launch(m: Extract<ToHelper, { t: 'spawn' }>, ready: PreparedSandbox | undefined): void {
  const id = m.id;
  const out = (fd: 1 | 2) => (d: Buffer) => {
    const l = live.get(id);
    if (l) {
      l.inFlight++;
      if (l.inFlight > MAX_IN_FLIGHT && !l.paused) {
        l.paused = true;
        l.handle.pause();
      }
    }
    send({ t: 'out', id, fd, d }, () => {
      if (!l) return;
      l.inFlight--;
      if (l.paused && l.inFlight <= MAX_IN_FLIGHT / 4) {
        l.paused = false;
        l.handle.resume();
      }
    });
  };
  const spec = {
    argv: m.argv,
    cwd: m.cwd,
    env: m.env,
    tty: false,
    sandboxed: m.sandboxed,
    cgroup: m.cgroup,
    seccomp: m.seccomp,
  };
  const events = {
    onStdout: out(1),
    onStderr: out(2),
    onExit: (code: number | null, signal: string | null, startError?: string) => {
      live.delete(id);
      send({ t: 'exit', id, code, signal, startError });
      if (live.size === 0 && held.length) setImmediate(releaseHeld);
    },
  };
  const handle = ready
    ? adoptChild(ready.use(m.cwd, m.warm?.argv ?? [], m.env), { ...spec, cgroup: ready.cgroup }, events)
    : spawnPipes(spec, events);
  live.set(id, { handle, inFlight: 0, paused: false });
  send({ t: 'spawned', id, pid: handle.pid, limited: handle.limited, warm: ready !== undefined });
}

/**
 * Starting the next sandbox forks this helper (and sets bubblewrap up, a few milliseconds of CPU) after moving
 * it into the sandbox's cgroup, which on cgroup v2 holds its thread for up to ~15 ms after a quiet spell (on v1
 * only its thread moves, at once: cgroup.ts). Asked for while a command runs (in a burst of commands, or in a
 * quiet moment while a command runs on in the background), such a start waits until no command of this helper
 * runs (just after the last exit is sent, while that result travels to the client and the next call comes
 * back), or PREPARE_WAIT_MS for a command that keeps running, so it delays neither the exit of the command that
 * has just started nor a test run's own CPU (`node test.js`, ~60 ms: docs/benchmarks.md). A bare wb-exec
 * (`moveAfter`, `dangerous`) costs the thread only its fork: it starts at once, beside the command.
 */
const PREPARE_WAIT_MS = 1000;
const held: Array<Extract<ToHelper, { t: 'prepare' }>> = [];
let heldTimer: NodeJS.Timeout | undefined;

function prepare(m: Extract<ToHelper, { t: 'prepare' }>): void {
  if (live.size === 0 || m.moveAfter === true) return startPrepared(m);
  held.push(m);
  heldTimer ??= setTimeout(releaseHeld, PREPARE_WAIT_MS);
}

function releaseHeld(): void {
  clearTimeout(heldTimer);
  heldTimer = undefined;
  for (const m of held.splice(0)) startPrepared(m);
}

/** Forgets the held request numbered `n`; whether there was one. */
function unhold(n: number): boolean {
  const i = held.findIndex((h) => h.n === n);
  if (i >= 0) held.splice(i, 1);
  return i >= 0;
}

function startPrepared(m: Extract<ToHelper, { t: 'prepare' }>): void {
  // The server keeps no more than KEPT_READY asked for; should it ask for more, the oldest goes.
  for (const [n, p] of prepared) {
    if (prepared.size < KEPT_READY) break;
    prepared.delete(n);
    p.discard();
  }
  const p = PreparedSandbox.start(m.n, m);
  if (p) prepared.set(m.n, p);
}

/** Lets the prepared sandbox `n` go, started or still held. */
function drop(n: number): void {
  if (unhold(n)) return;
  prepared.get(n)?.discard();
  prepared.delete(n);
}

function handle(m: ToHelper): void {
  if (m.t === 'ping') return send({ t: 'pong', n: m.n });
  if (m.t === 'spawn') return start(m);
  if (m.t === 'prepare') return prepare(m);
  if (m.t === 'drop') return drop(m.n);
  const queue = waiting.get(m.id);
  if (queue) return void queue.push(m);
  const l = live.get(m.id);
  if (!l) return;
  if (m.t === 'write') l.handle.write(m.data);
  else if (m.t === 'end') l.handle.closeStdin();
  else if (m.t === 'signal') l.handle.signal(m.sig);
}

// The server batches what it posts in one turn (spawner-outbox.ts). A prepare comes last: setting up the next
// sandbox must not delay the end of stdin or a write that came with the command it follows.
process.on('message', (m: ToHelper | ToHelper[]) => {
  const batch = Array.isArray(m) ? m : [m];
  for (const x of batch) if (x.t !== 'prepare') handle(x);
  for (const x of batch) if (x.t === 'prepare') handle(x);
});
send({ t: 'ready', pid: process.pid });
process.on('disconnect', () => {
  clearTimeout(heldTimer);
  for (const p of prepared.values()) p.discard();
  process.exit(0);
});
// A terminal's Ctrl-C reaches the whole process group: the server shuts its commands down and then lets this
// helper go (disconnect), so the helper must not die first (which the server would report as a crash).
process.on('SIGINT', () => {});
process.on('SIGHUP', () => {});
