// The small C programs of native/ (scripts/build-native.mjs): where the build put them, and the copies the server
// runs. A program that runs outside every sandbox, or sets one up, is run from a copy the server made in its
// runtime directory's root, which sandboxed commands can neither see (bubblewrap) nor write (Landlock), never
// from dist/ itself: the server may be installed inside the workspace it serves, where a command could replace
// the built file between two runs (docs/security-model.md, rule B). The spawner helper's script is copied the
// same way (spawner.ts, placeCopy).
import { chmodSync, copyFileSync, existsSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** A program of native/ built next to this module (dist), or in dist/ when this module runs from source (tests). */
export function builtProgram(name: string): string | undefined {
  const candidates = [
    new URL(`../native/${name}`, import.meta.url),
    new URL(`../../dist/native/${name}`, import.meta.url),
  ];
  for (const u of candidates) {
    const p = fileURLToPath(u);
    if (existsSync(p)) return p;
  }
  return undefined;
}

const placed = new Map<string, string>();

/**
 * A private copy (mode 0500) of a built program in `dir`, made once per directory; undefined when the program
 * was not built or cannot be copied (the caller goes without it, as when it was not built).
 */
export function placeProgram(name: string, dir: string): string | undefined {
  const built = builtProgram(name);
  return built && placeCopy(built, dir, name);
}

/** A private copy (mode 0500) of the file `built` as `dir`/`name`, made once per place (placeProgram). */
export function placeCopy(built: string, dir: string, name: string): string | undefined {
  const at = path.join(dir, name);
  const done = placed.get(at);
  if (done !== undefined && existsSync(done)) return done;
  const tmp = `${at}.${process.pid}.tmp`;
  try {
    copyFileSync(built, tmp);
    chmodSync(tmp, 0o500);
    renameSync(tmp, at);
  } catch {
    rmSync(tmp, { force: true });
    return undefined;
  }
  placed.set(at, at);
  return at;
}
