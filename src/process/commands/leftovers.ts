// Start-up cleanup of processes left by a crashed earlier instance of the same workspace
// (docs/design-notes.md#runtime-directory). runtime-dir.ts removes a dead instance's directory; its commands
// may still run. They are recognised by their environment: every command gets HOME/TMPDIR inside
// `<base>/<instance pid>/`, so a process whose HOME or TMPDIR lies under a sibling directory of an instance
// that is no longer alive was started by that instance. Only processes of our own filesystem root are
// considered (a container sharing the directory is not ours to judge), and only ones we may signal. Runs in
// the background; never blocks start-up.
import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { pidAlive as alive } from '../../core/pid.js';

/** Kills leftovers of dead instances whose runtime directories sat beside `instanceRoot`; returns how many. */
export async function killLeftovers(instanceRoot: string, selfPid = process.pid): Promise<number> {
  const base = path.dirname(instanceRoot) + '/';
  let names: string[];
  let ourRoot: { dev: number; ino: number };
  try {
    names = await readdir('/proc');
    ourRoot = await stat('/proc/self/root');
  } catch {
    return 0;
  }
  let killed = 0;
  for (const name of names) {
    if (!/^\d+$/.test(name) || Number(name) === selfPid) continue;
    let env: string;
    try {
      env = await readFile(`/proc/${name}/environ`, 'latin1');
    } catch {
      continue;
    }
    const owner = instanceOf(env, base);
    if (owner === null || owner === selfPid || alive(owner)) continue;
    try {
      const r = await stat(`/proc/${name}/root`);
      if (r.dev !== ourRoot.dev || r.ino !== ourRoot.ino) continue;
      process.kill(Number(name), 'SIGKILL');
      killed++;
    } catch {
      /* gone, or not ours */
    }
  }
  return killed;
}

/** The instance pid whose runtime directory holds this environment's HOME or TMPDIR, or null. */
function instanceOf(environ: string, base: string): number | null {
  if (!environ.includes(base)) return null;
  for (const entry of environ.split('\0')) {
    const eq = entry.indexOf('=');
    const key = entry.slice(0, eq);
    if (key !== 'HOME' && key !== 'TMPDIR') continue;
    const value = entry.slice(eq + 1);
    if (!value.startsWith(base)) continue;
    const seg = value.slice(base.length).split('/')[0] as string;
    if (/^\d+(-\d+)?$/.test(seg)) return Number.parseInt(seg, 10);
  }
  return null;
}
