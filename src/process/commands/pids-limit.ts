// How a command tree's process count is bounded (docs/security-model.md; SERVICE_EXEC_MAX_PROCESSES), decided
// once per runtime. Preferred: a pids cgroup per command (cgroup.ts), under a cgroup of this instance in the
// pids hierarchy of cgroup v1, or in cgroup v2 where the pids controller can be delegated to our children
// (when the server is alone in its cgroup it moves itself into a leaf `workbench-mcp-<pid>-server` to allow
// that). Else a watchdog: every WATCHDOG_MS it counts each running command's tree and kills a tree past the
// limit (in the sandbox the tree is the whole PID namespace; without one, a process that leaves the tree is
// not counted).
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pidAlive } from '../../core/pid.js';
import { killCgroup, movesThread, type CgroupTarget } from '../spawn/cgroup.js';
import { descendants } from '../spawn/tree.js';

export interface ProcessLimitStatus {
  max_processes: number;
  enforced_by: 'cgroup v1 pids' | 'cgroup v2 pids' | 'watchdog';
  reason: string;
}

export const WATCHDOG_MS = 200;
const PREFIX = 'workbench-mcp-';

export class ProcessLimiter {
  private seq = 0;

  constructor(
    readonly status: ProcessLimitStatus,
    private readonly instance?: string,
    private readonly home?: string,
  ) {}

  get usesCgroup(): boolean {
    return this.instance !== undefined;
  }

  /**
   * Whether moving a process into a command's cgroup may wait for a kernel grace period: a cgroup whose
   * hierarchy has no `tasks` file, where a command cannot be born inside by moving the spawning thread alone
   * (cgroup.ts enterCgroup). Only then is a process prepared ahead for commands without a sandbox (prepared.ts).
   */
  get moveWaits(): boolean {
    return this.home !== undefined && this.instance !== undefined && !movesThread(this.home);
  }

  /** The cgroup for the next command, or undefined when the watchdog bounds it. */
  next(): CgroupTarget | undefined {
    if (!this.instance || !this.home) return undefined;
    return { dir: `${this.instance}/c${++this.seq}`, home: this.home, max: this.status.max_processes };
  }

  /** At shutdown, after every command ended: kill what is left in this instance's cgroups, remove them. */
  close(): void {
    const dir = this.instance;
    if (!dir) return;
    removeTree(dir, true);
    // Killed processes take a moment to leave; one more try, then the next start's clean-up.
    if (existsSync(dir)) setTimeout(() => removeTree(dir, true), 250).unref();
  }
}

let instances = 0;
/** cgroup v2: the leaf this process moved itself into (once per process). */
let v2Leaf: string | undefined;

/** Decide how commands' process counts are bounded; never throws. */
export function probeProcessLimit(max: number, pid = process.pid): ProcessLimiter {
  const why: string[] = [];
  let cgroups: string;
  let mounts: string;
  try {
    cgroups = readFileSync('/proc/self/cgroup', 'latin1');
    mounts = readFileSync('/proc/self/mountinfo', 'latin1');
  } catch (e) {
    return watchdog(max, [`/proc/self/cgroup is unreadable (${(e as NodeJS.ErrnoException).code})`]);
  }
  const id = `${pid}-${++instances}`;
  for (const version of [1, 2] as const) {
    const r = version === 1 ? tryV1(cgroups, mounts, id) : tryV2(cgroups, mounts, id, pid);
    if (typeof r === 'string') {
      why.push(r);
      continue;
    }
    const status: ProcessLimitStatus = {
      max_processes: max,
      enforced_by: version === 1 ? 'cgroup v1 pids' : 'cgroup v2 pids',
      reason: `each command runs in its own pids cgroup (${r.instance}/c<N>): forks past ${max} processes fail with EAGAIN`,
    };
    return new ProcessLimiter(status, r.instance, r.home);
  }
  return watchdog(max, why);
}

function watchdog(max: number, why: string[]): ProcessLimiter {
  return new ProcessLimiter({
    max_processes: max,
    enforced_by: 'watchdog',
    reason:
      `no pids cgroup is available (${why.join('; ')}): every ${WATCHDOG_MS} ms the server counts each command's ` +
      `process tree and kills a tree past ${max} processes (a storm can overshoot until then)`,
  });
}

interface Found {
  instance: string;
  home: string;
}

/** `<mount point>/<our path>` for a hierarchy, from /proc/self/cgroup and mountinfo. */
function cgroupDir(mounts: string, fstype: string, path0: string, opt?: string): string | undefined {
  for (const line of mounts.split('\n')) {
    const [pre, post] = line.split(' - ');
    if (!pre || !post) continue;
    const f = pre.split(' ');
    const [type, , superOpts] = post.split(' ');
    if (type !== fstype) continue;
    if (opt && !(superOpts ?? '').split(',').includes(opt)) continue;
    const root = f[3] as string;
    const point = (f[4] as string).replace(/\\040/g, ' ');
    const rel =
      root === '/' ? path0 : path0 === root || path0.startsWith(root + '/') ? path0.slice(root.length) : null;
    if (rel !== null) return path.join(point, rel).replace(/(.)\/+$/, '$1');
  }
  return undefined;
}

function tryV1(cgroups: string, mounts: string, id: string): Found | string {
  const line = cgroups.split('\n').find((l) => /^\d+:([^:]*,)?pids(,[^:]*)?:/.test(l));
  if (!line) return 'no cgroup v1 pids hierarchy';
  const dir = cgroupDir(mounts, 'cgroup', line.slice(line.indexOf(':', line.indexOf(':') + 1) + 1), 'pids');
  if (!dir) return 'the cgroup v1 pids hierarchy is not mounted here';
  return makeInstance(dir, id, dir, 'cgroup v1 pids');
}

function tryV2(cgroups: string, mounts: string, id: string, pid: number): Found | string {
  const line = cgroups.split('\n').find((l) => l.startsWith('0::'));
  if (!line) return 'no cgroup v2 hierarchy';
  const own = cgroupDir(mounts, 'cgroup2', line.slice(3));
  if (!own) return 'the cgroup v2 hierarchy is not mounted here';
  // Already moved into our leaf earlier: the parent is where the instances go.
  const dir = v2Leaf && own === v2Leaf ? path.dirname(own) : own;
  const has = (file: string) => read(`${dir}/${file}`).split(/\s+/).includes('pids');
  if (!has('cgroup.controllers')) return 'cgroup v2 does not delegate the pids controller to this cgroup';
  if (!has('cgroup.subtree_control') && !enablePids(dir, pid))
    return 'cgroup v2: the pids controller cannot be enabled for children (other processes share this cgroup)';
  return makeInstance(dir, id, v2Leaf ?? dir, 'cgroup v2 pids');
}

/** cgroup v2 forbids controllers for children while processes sit in the cgroup: move into a leaf first. */
function enablePids(dir: string, pid: number): boolean {
  try {
    writeFileSync(`${dir}/cgroup.subtree_control`, '+pids');
    return true;
  } catch {
    /* processes in it: try the leaf */
  }
  const procs = read(`${dir}/cgroup.procs`).split('\n').filter(Boolean);
  if (procs.length !== 1 || Number(procs[0]) !== pid) return false;
  const leaf = `${dir}/${PREFIX}${pid}-server`;
  try {
    mkdirSync(leaf, { recursive: true });
    writeFileSync(`${leaf}/cgroup.procs`, String(pid));
    v2Leaf = leaf;
    writeFileSync(`${dir}/cgroup.subtree_control`, '+pids');
    return true;
  } catch {
    return false;
  }
}

/** Create `<dir>/workbench-mcp-<id>` and check that a child cgroup with a limit can be made in it. */
function makeInstance(dir: string, id: string, home: string, what: string): Found | string {
  removeStale(dir);
  const instance = `${dir}/${PREFIX}${id}`;
  try {
    mkdirSync(instance, { recursive: true });
    // cgroup v2: the instance hands the pids controller down to each command's cgroup.
    if (what.startsWith('cgroup v2')) writeFileSync(`${instance}/cgroup.subtree_control`, '+pids');
    mkdirSync(`${instance}/probe`);
    writeFileSync(`${instance}/probe/pids.max`, '1');
    rmdirSync(`${instance}/probe`);
    return { instance, home };
  } catch (e) {
    removeTree(instance);
    return `${what}: ${dir} is not writable by this server (${(e as NodeJS.ErrnoException).code})`;
  }
}

/** Instance cgroups left by dead servers: removed when empty. */
function removeStale(dir: string): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const n of names) {
    const m = /^workbench-mcp-(\d+)-(?:\d+|server)$/.exec(n);
    // Whatever is still in a dead instance's cgroups was started by its commands.
    if (m && !pidAlive(Number(m[1]))) removeTree(`${dir}/${n}`, !n.endsWith('-server'));
  }
}

function removeTree(dir: string, kill = false): void {
  if (kill) killCgroup(dir);
  let names: string[] = [];
  try {
    names = readdirSync(dir, { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => d.name);
  } catch {
    return;
  }
  for (const n of names) removeTree(`${dir}/${n}`, kill);
  try {
    rmdirSync(dir);
  } catch {
    /* still has processes */
  }
}

function read(p: string): string {
  try {
    return readFileSync(p, 'latin1');
  } catch {
    return '';
  }
}

/** Processes in a command's tree: the leader and its descendants (in bubblewrap, the whole PID namespace). */
export function treeSize(leader: number): number {
  return leader > 0 ? 1 + descendants(leader).length : 0;
}
