// What bubblewrap's jail for git and ripgrep is made of (jail.ts): its mounts and its namespaces, measured part
// by part in bench/jail-cost-bench.mjs (docs/benchmarks.md#jails-prepared-ahead).
import { systemBinds } from '../sandbox/host-view.js';

/** The few files of /etc that programs and the dynamic loader read; the rest of /etc stays out of sight. */
export const ETC_FILES = [
  '/etc/ld.so.cache',
  '/etc/ld.so.conf',
  '/etc/ld.so.conf.d',
  '/etc/localtime',
  '/etc/alternatives',
  '/etc/passwd',
  '/etc/group',
  '/etc/nsswitch.conf',
];

/**
 * The namespaces and limits of bubblewrap's jail (with a user namespace where the host allows one). The program
 * is its PID namespace's first process (`--as-pid-1`, no reaper of bubblewrap's in between): when it exits the
 * kernel ends whatever it left in the namespace, and its end reaches the server one process hop sooner.
 */
export function isolation(userns: boolean): string[] {
  const a = ['--unshare-all', '--as-pid-1', '--die-with-parent', '--new-session'];
  if (userns) a.push('--unshare-user', '--disable-userns');
  a.push('--cap-drop', 'ALL');
  return a;
}

/** What bubblewrap's jail shows: the system read-only, the few files of /etc, its own /proc, /dev and /tmp, the workspace read-only. */
export function baseMounts(workspaceReal: string): string[] {
  const a = systemBinds();
  a.push('--dir', '/etc');
  for (const f of ETC_FILES) a.push('--ro-bind-try', f, f);
  a.push('--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp');
  a.push('--ro-bind', workspaceReal, workspaceReal);
  return a;
}
