// One long-lived sandbox per server for pipe commands (issue 14): bubblewrap's namespaces, mounts and
// capability drop are paid once, when the server starts, instead of on every command. Inside runs the same
// spawner helper as outside (spawner-main.ts), started by bwrap with the options of sandbox.ts; each command
// is then a plain fork of it, in its own process group, with the same filesystem, network, user namespace
// and capabilities as a per-command sandbox. What differs, and why it still holds:
// - the PID namespace is the zone's, shared by this server's commands (the server's processes stay out of
//   sight); pids the helper reports are not this host's, so every signal goes through the helper;
// - each command's pids cgroup is entered from outside: the helper (found by its pid in both namespaces when
//   it first reports, before any command exists) is moved into the command's cgroup around the fork and back
//   to a small cgroup of its own, as spawnInCgroup does for a local spawn; the cgroup file system stays
//   read-only inside, so no command can lift its own limit, and one that takes the helper over (commands and
//   helper share a user) can fork from it only up to that small cgroup's limit;
// - at the end of a command its cgroup is emptied (a daemon that left the process group ends with it), as
//   the per-command PID namespace did. Hence a zone is used only where pids cgroups are: elsewhere, and for
//   terminals and one-off network grants, commands keep a bwrap of their own (registry.ts).
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Logger } from '../core/log.js';
import { enterCgroup, leaveCgroup, type CgroupTarget } from './cgroup.js';
import { bwrapArgs, type SandboxPlan } from './sandbox.js';
import type { ProcessLimiter } from './pids-limit.js';
import { helperPath, Spawner, type HelperLaunch } from './spawner.js';
import { descendants } from './tree.js';

export function zoneLaunch(
  plan: SandboxPlan,
  workspaceReal: string,
  log: Logger,
  /** A fresh cgroup for the helper between forks (pids-limit.ts `zoneHome`). */
  helperHome: () => CgroupTarget | undefined,
): HelperLaunch {
  let bwrapPid = 0;
  return {
    start(file) {
      const argv = [...bwrapArgs(plan, workspaceReal), process.execPath, '--max-semi-space-size=1', file];
      const child = spawn(plan.bwrap as string, argv, {
        env: {},
        // Its own session and no terminal: nothing inside can reach the server's terminal.
        detached: true,
        stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
        serialization: 'advanced',
      });
      bwrapPid = child.pid ?? 0;
      child.stderr?.setEncoding('utf8');
      child.stderr?.on('data', (d: string) =>
        log.warn('sandbox helper', { stderr: d.trim().slice(0, 2000) }),
      );
      (child.stderr as unknown as { unref?: () => void })?.unref?.();
      return child;
    },
    placement(innerPid) {
      const host = hostPid(bwrapPid, innerPid);
      if (!host) return undefined;
      const home = helperHome();
      if (!home || !enterCgroup(home, host)) return undefined;
      return {
        enter: (cg) => enterCgroup(cg, host),
        leave: (cg) => leaveCgroup({ ...cg, home: home.dir }, host),
      };
    },
  };
}

/** The host pid of the process below `root` whose pid in its own namespace is `inner`. */
function hostPid(root: number, inner: number): number | undefined {
  if (root <= 0) return undefined;
  for (const p of descendants(root)) {
    let status: string;
    try {
      status = readFileSync(`/proc/${p}/status`, 'latin1');
    } catch {
      continue;
    }
    const ns = /^NSpid:\s*(.*)$/m.exec(status)?.[1]?.trim().split(/\s+/);
    if (ns && ns.length > 1 && Number(ns[ns.length - 1]) === inner) return p;
  }
  return undefined;
}

/** The zone of a registry: started on first use, replaced when the sandbox's mount masks change. */
export class Zones {
  private zone: Spawner | undefined;
  /** The mount options the zone was started with (masks are refreshed: a changed set means a new zone). */
  private mounts = '';

  constructor(
    private readonly plan: () => SandboxPlan,
    private readonly limiter: () => ProcessLimiter,
    private readonly workspaceReal: string,
    private readonly log: Logger,
  ) {}

  /** The zone for a sandboxed pipe command, when this host lets it bound each command's processes. */
  current(): Spawner | undefined {
    const plan = this.plan();
    if (plan.status.in_use !== 'bwrap' || !this.limiter().usesCgroup) return undefined;
    const mounts = (plan.args?.() ?? []).join('\0');
    if (this.zone && mounts !== this.mounts && this.zone.available) {
      this.zone.retire();
      this.zone = undefined;
    }
    if (!this.zone) {
      this.mounts = mounts;
      const launch = zoneLaunch(plan, this.workspaceReal, this.log, () => this.limiter().zoneHome());
      this.zone = new Spawner(this.log, launch);
    }
    return this.zone.available ? this.zone : undefined;
  }

  /** The zone when it is up (until then, and if it never comes up, commands get a bwrap each). */
  ready(): Spawner | undefined {
    const zone = this.current();
    if (zone && !zone.proven) zone.warm();
    return zone?.proven ? zone : undefined;
  }

  close(): Promise<void> {
    return this.zone?.close() ?? Promise.resolve();
  }
}

/** Node and the helper's files, which a zone must see (sandbox-mounts.ts keeps them visible). */
export function helperFiles(): string[] {
  const file = helperPath();
  if (!file) return [];
  const dir = path.dirname(file);
  // The package.json above dist/ says these files are ES modules.
  return [process.execPath, dir, path.resolve(dir, '../../package.json')];
}
