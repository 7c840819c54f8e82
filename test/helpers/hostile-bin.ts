// The built bin started for the second round of attack tests (test/confinement/confinement2-*.test.ts), as root or through
// `setpriv` as nobody (uid 65534) like test/confinement/confinement-commands-suite.ts does, plus what those tests look at
// from outside: the host's process table (/proc), a server's descendants, a wait for a process to stop, and a
// marker file a planted program would write to.
// A start may end in a refusal (a squatted runtime directory): startOrRefusal reports either outcome.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  chownSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { parseReadyLine } from '../../src/core/ready-line.js';
import { HUNG_MS, needBwrap } from '../exec/exec-support.js';
import { BIN, BIN_NODE_FLAGS, TEST_TOKEN } from './server.js';

export type RunAs = 'root' | 'nobody';
export const NOBODY = 65534;

export interface BinServer {
  url: string;
  pid: number;
  proc: ChildProcess;
  stderr(): string;
  /** SIGTERM, then SIGKILL if it has not exited after a while (a stopped helper must not hang cleanup). */
  stop(): Promise<void>;
}

export interface BinOptions {
  /** --workspace; undefined starts the server without one (with SERVICE_PROJECTS: no default workspace). */
  workspace: string | undefined;
  as: RunAs;
  /** SERVICE_RUNTIME_ROOT; unset leaves the server's default. */
  runtimeRoot?: string;
  env?: Record<string, string>;
  /** Node options before the bin (e.g. `--import` of an in-process probe). */
  nodeArgs?: string[];
  /** The bin to start (a copy of the package elsewhere); the repository's dist/cli/main.js by default. */
  bin?: string;
  /** Programs the server is started through, before any user switch (test/helpers/container-sim.ts). */
  launcher?: string[];
  /**
   * Called while the server process is stopped just before it execs node (its pid is already final), so a
   * test can prepare what depends on that pid without racing the start.
   */
  beforeStart?: (pid: number) => void;
}

export type StartOutcome =
  { kind: 'ready'; server: BinServer } | { kind: 'exit'; code: number | null; stderr: string };

/** Starts the bin; resolves on the ready line or on exit (a refusal), whichever comes first. */
export function startOrRefusal(o: BinOptions): Promise<StartOutcome> {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: o.as === 'root' ? '/root' : '/nonexistent',
    SERVICE_AUTH_TOKEN: TEST_TOKEN,
    SERVICE_SANDBOX: 'bwrap',
    ...(o.runtimeRoot ? { SERVICE_RUNTIME_ROOT: o.runtimeRoot } : {}),
    ...o.env,
  };
  const node = [
    process.execPath,
    ...BIN_NODE_FLAGS,
    ...(o.nodeArgs ?? []),
    o.bin ?? BIN,
    ...(o.workspace === undefined ? [] : ['--workspace', o.workspace]),
    '--port',
    '0',
  ];
  const user = o.as === 'root' ? [] : ['setpriv', `--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups'];
  // `kill -STOP $$` then exec: the pid is the server's, and the test resumes it once it is ready for it.
  const inner = [...(o.launcher ?? []), ...user, ...node];
  const argv = o.beforeStart ? ['sh', '-c', 'kill -STOP $$; exec "$@"', 'sh', ...inner] : inner;
  const proc = spawn(argv[0] as string, argv.slice(1), { env, stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  proc.stderr?.on('data', (c: Buffer) => (err += c.toString()));
  const pid = proc.pid as number;
  const exited = new Promise<void>((r) => proc.once('exit', () => r()));
  const stop = async () => {
    if (proc.exitCode !== null || proc.signalCode !== null) return;
    proc.kill('SIGCONT');
    proc.kill('SIGTERM');
    const late = setTimeout(() => proc.kill('SIGKILL'), 20_000);
    await exited;
    clearTimeout(late);
  };
  return new Promise((resolve, reject) => {
    const hung = setTimeout(() => {
      void stop();
      reject(new Error(`no ready line and no exit within ${HUNG_MS} ms: ${err}`));
    }, HUNG_MS);
    if (o.beforeStart) {
      void waitStopped(pid).then((stopped) => {
        if (!stopped) return reject(new Error('the server process never stopped before exec'));
        try {
          o.beforeStart?.(pid);
        } catch (e) {
          void stop();
          return reject(e);
        }
        process.kill(pid, 'SIGCONT');
      });
    }
    proc.stderr?.on('data', () => {
      const ready = parseReadyLine(err);
      if (!ready) return;
      clearTimeout(hung);
      resolve({ kind: 'ready', server: { url: ready.url, pid, proc, stderr: () => err, stop } });
    });
    proc.once('exit', (code) => {
      clearTimeout(hung);
      resolve({ kind: 'exit', code, stderr: err });
    });
  });
}

/** Starts the bin and requires it to come up. */
export async function startBinAs(o: BinOptions): Promise<BinServer> {
  const r = await startOrRefusal(o);
  if (r.kind === 'exit') throw new Error(`server exited with ${r.code}: ${r.stderr}`);
  return r.server;
}

/** Whether a suite whose server runs as `as` can run here; prints why not (a failure under CI=true). */
export function canRunAs(as: RunAs, what: string, need: (what: string) => boolean = needBwrap): boolean {
  if (!need(`${what} (server as ${as})`)) return false;
  const why =
    process.getuid?.() !== 0
      ? as === 'root'
        ? 'the tests do not run as root'
        : 'switching to nobody needs root'
      : as === 'nobody' && spawnSync('setpriv', ['--version']).error
        ? 'setpriv (util-linux) is not installed'
        : '';
  if (!why) return true;
  if (process.env.CI === 'true') throw new Error(`${what} (server as ${as}) under CI=true: ${why}`);
  console.log(`SKIP ${what} (server as ${as}): ${why}`);
  return false;
}

/** A fresh directory owned by the server's user, mode 0755. */
export function ownedDir(parent: string, prefix: string, as: RunAs): string {
  const d = mkdtempSync(path.join(parent, prefix));
  if (as === 'nobody') chownSync(d, NOBODY, NOBODY);
  chmodSync(d, 0o755);
  return d;
}

/**
 * An empty marker file the server's user may write (mode 0666), alone in a fresh directory (0755, the test's)
 * outside the workspace: a planted program appends to it if it ever runs. Remove `path.dirname(marker)` after.
 */
export function markerFile(parent: string, prefix: string, as: RunAs): string {
  const canary = mkdtempSync(path.join(parent, prefix));
  chmodSync(canary, 0o755);
  const marker = path.join(canary, `marker-${randomBytes(4).toString('hex')}`);
  writeFileSync(marker, '');
  chmodSync(marker, 0o666);
  if (as === 'nobody') chownSync(marker, NOBODY, NOBODY);
  return marker;
}

export interface Proc {
  pid: number;
  ppid: number;
  /** One letter from /proc/<pid>/stat: R, S, D, T (stopped), t (traced), Z… */
  state: string;
  cmdline: string;
}

/** The host's process table. */
export function procTable(): Map<number, Proc> {
  const out = new Map<number, Proc>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'latin1');
      const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const cmdline = readFileSync(`/proc/${name}/cmdline`, 'latin1').split('\0').join(' ').trim();
      out.set(Number(name), { pid: Number(name), ppid: Number(ppid), state: state as string, cmdline });
    } catch {
      /* gone */
    }
  }
  return out;
}

/** Every live process below `root` (not `root` itself), from one snapshot of the table. */
export function descendantsOf(root: number, table = procTable()): Proc[] {
  const kids = new Map<number, Proc[]>();
  for (const p of table.values()) kids.set(p.ppid, [...(kids.get(p.ppid) ?? []), p]);
  const out: Proc[] = [];
  const todo = [...(kids.get(root) ?? [])];
  for (let p = todo.shift(); p && out.length < 100_000; p = todo.shift()) {
    out.push(p);
    todo.push(...(kids.get(p.pid) ?? []));
  }
  return out;
}

/** What each open descriptor of `pid` leads to (`socket:[inode]`, a path…); '' for one closed meanwhile. */
export function descriptorLinks(pid: number): string[] {
  return readdirSync(`/proc/${pid}/fd`).map((fd) => {
    try {
      return readlinkSync(`/proc/${pid}/fd/${fd}`);
    } catch {
      return '';
    }
  });
}

/** Waits (bounded) until `pid` is in the stopped state; false if it exited or never stopped. */
export async function waitStopped(pid: number): Promise<boolean> {
  const end = Date.now() + HUNG_MS;
  while (Date.now() < end) {
    let state = '';
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
      state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    } catch {
      return false;
    }
    if (state === 'T') return true;
    await new Promise((r) => setTimeout(r, 10));
  }
  return false;
}

/** process.kill that ignores a process already gone. */
export function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    /* gone */
  }
}
