// Running `workbench-mcp tunnel` in tests: a bin directory of stand-in provider programs (shell wrappers that
// exec node on test/fixtures/tunnel-standins/*.mjs), the tunnel spawned from the built bin with its output
// collected, waits on its output and exit (ceilings only end a hung test), and the process tree it started,
// read from /proc (pid + start time, so a reused pid is never mistaken for a survivor); and the world the
// tunnel tests share (tunnelWorld).
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { HUNG_MS, waitFor } from '../exec/exec-support.js';
import { publishNames, removeDir, type PublishedNames } from './public-names.js';
import { BIN, REPO_ROOT } from './server.js';
import { makeWorkspace, type TempWorkspace } from './workspace.js';

export function standinBin(dir: string): string {
  const bin = path.join(dir, 'bin');
  mkdirSync(bin, { recursive: true });
  for (const name of ['cloudflared', 'ngrok', 'devtunnel']) {
    const script = path.join(REPO_ROOT, 'test/fixtures/tunnel-standins', `${name}.mjs`);
    writeFileSync(path.join(bin, name), `#!/bin/sh\nexec "${process.execPath}" "${script}" "$@"\n`);
    chmodSync(path.join(bin, name), 0o755);
  }
  return bin;
}

/**
 * What a tunnel test runs in: the stand-in providers first on PATH, a workspace to publish, and real-shaped
 * public names for `hosts` (a certificate the runs trust, /etc/hosts entries to `ip`, and the TLS proxy on 443
 * that the stand-ins route through `dir/routes`). Needs root (public-names.ts).
 */
export interface TunnelWorld {
  dir: string;
  ws: TempWorkspace;
  /** The certificate of the public names, as a CA to trust, and its file. */
  ca: Buffer;
  caFile: string;
  /** A tunnel run's environment: the stand-ins on PATH, a private HOME, the CA, the proxy's routes. */
  env(extra?: Record<string, string>): Record<string, string>;
  close(): Promise<void>;
}

export async function tunnelWorld(
  prefix: string,
  ip: string,
  hosts: readonly string[],
): Promise<TunnelWorld> {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  const bin = standinBin(dir);
  const ws = makeWorkspace({ 'README.md': '# published\n' });
  let names: PublishedNames;
  try {
    names = await publishNames(ip, hosts, path.join(dir, 'routes'));
  } catch (e) {
    ws.cleanup();
    removeDir(dir);
    throw e;
  }
  const close = async () => {
    await names.close();
    ws.cleanup();
    removeDir(dir);
  };
  const env = (extra: Record<string, string> = {}) => ({
    PATH: `${bin}:${process.env.PATH ?? '/usr/bin:/bin'}`,
    HOME: path.join(dir, 'home'),
    NODE_EXTRA_CA_CERTS: names.caFile,
    STANDIN_ROUTES: path.join(dir, 'routes'),
    ...extra,
  });
  return { dir, ws, ca: names.ca, caFile: names.caFile, env, close };
}

export interface RunningTunnel {
  proc: ChildProcess;
  out(): string;
  err(): string;
  exited: Promise<number | null>;
  /** Resolves with the match once stdout (or stderr) matches; rejects on exit or the ceiling. */
  waitOut(re: RegExp, stream?: 'out' | 'err'): Promise<RegExpExecArray>;
}

export function startTunnel(args: readonly string[], env: Record<string, string>): RunningTunnel {
  const proc = spawn(process.execPath, [BIN, 'tunnel', ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  proc.stdout?.on('data', (c: Buffer) => (out += c.toString()));
  proc.stderr?.on('data', (c: Buffer) => (err += c.toString()));
  const exited = new Promise<number | null>((r) => proc.once('exit', (code) => r(code)));
  let done = false;
  void exited.then(() => (done = true));
  return {
    proc,
    out: () => out,
    err: () => err,
    exited,
    async waitOut(re, stream = 'out') {
      let m: RegExpExecArray | null = null;
      await waitFor(() => (m = re.exec(stream === 'out' ? out : err)) !== null || done, 2 * HUNG_MS, 50);
      if (!m)
        throw new Error(`tunnel never printed ${re} (exited: ${done})\nstdout:\n${out}\nstderr:\n${err}`);
      return m;
    },
  };
}

/** Waits for the exit code (the ceiling only ends a hung test). */
export async function exitCode(t: RunningTunnel): Promise<number | null> {
  const timer = new Promise<'hung'>((r) => setTimeout(() => r('hung'), 2 * HUNG_MS).unref());
  const r = await Promise.race([t.exited, timer]);
  if (r === 'hung') throw new Error(`tunnel did not exit\nstdout:\n${t.out()}\nstderr:\n${t.err()}`);
  return r;
}

export interface Proc {
  pid: number;
  start: string;
  cmdline: string;
  environ: string;
}

function stat(pid: number): { ppid: number; start: string; zombie: boolean } | undefined {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'latin1');
    const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
    return { ppid: Number(f[1]), start: f[19] as string, zombie: f[0] === 'Z' };
  } catch {
    return undefined;
  }
}

/** Every live process below `root` (root included), with its argv and environment. */
export function processTree(root: number): Proc[] {
  const parent = new Map<number, number>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const s = stat(Number(name));
    if (s && !s.zombie) parent.set(Number(name), s.ppid);
  }
  const inTree = (pid: number) => {
    for (let cur: number | undefined = pid, hops = 0; cur && hops < 4096; hops++) {
      if (cur === root) return true;
      cur = parent.get(cur);
    }
    return false;
  };
  const out: Proc[] = [];
  for (const pid of parent.keys()) {
    if (!inTree(pid)) continue;
    try {
      out.push({
        pid,
        start: stat(pid)?.start ?? '',
        cmdline: readFileSync(`/proc/${pid}/cmdline`, 'latin1').split('\0').join(' ').trim(),
        environ: readFileSync(`/proc/${pid}/environ`, 'latin1'),
      });
    } catch {
      /* gone meanwhile */
    }
  }
  return out;
}

/** Whether any of these processes still runs (same pid and start time, not a zombie). */
export function survivors(procs: readonly Proc[]): Proc[] {
  return procs.filter((p) => {
    const s = stat(p.pid);
    return s !== undefined && !s.zombie && s.start === p.start;
  });
}

/** Waits until the tree below `root` holds a process whose argv matches each pattern. */
export async function waitTree(root: number, patterns: readonly RegExp[]): Promise<Proc[]> {
  let tree: Proc[] = [];
  const ok = await waitFor(() => {
    tree = processTree(root);
    return patterns.every((re) => tree.some((p) => re.test(p.cmdline)));
  });
  if (!ok)
    throw new Error(
      `process tree never held ${patterns.join(', ')}: ${tree.map((p) => p.cmdline).join(' | ')}`,
    );
  return tree;
}

/** `workbench-mcp doctor …` from the built bin; resolves with its exit code and output. */
export function runDoctor(
  args: readonly string[],
  env: Record<string, string>,
): Promise<{ code: number | null; out: string; err: string }> {
  const proc = spawn(process.execPath, [BIN, 'doctor', ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  proc.stdout?.on('data', (c: Buffer) => (out += c.toString()));
  proc.stderr?.on('data', (c: Buffer) => (err += c.toString()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`doctor hung\n${out}\n${err}`));
    }, 2 * HUNG_MS);
    proc.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, out, err });
    });
  });
}
