// Where a program the jail runs lies (jail.ts): its path found on PATH once, and the directory of it a
// bubblewrap jail must bind because the system directories do not already show it.
import { realpathSync } from 'node:fs';
import path from 'node:path';
import { SYSTEM_TOPS } from '../sandbox/host-view.js';
import { findExecutable, isExecutable } from '../spawn/spawn.js';

export class ProgramPaths {
  /** Where PATH led each program name last time. */
  private readonly found = new Map<string, string>();
  private readonly dirsOf = new Map<string, string[]>();

  constructor(private readonly pathVar: string | undefined) {}

  /**
   * `file`'s path: itself when absolute, else where PATH led last time while that is still an executable (one
   * access(2), where a search of PATH fails once per directory before it), else searched again.
   */
  path(file: string): string | undefined {
    if (path.isAbsolute(file)) return file;
    const known = this.found.get(file);
    if (known !== undefined && isExecutable(known)) return known;
    const p = findExecutable(file, this.pathVar);
    if (p) this.found.set(file, p);
    else this.found.delete(file);
    return p;
  }

  /** Bind the program's own directory where the system directories do not already show it. */
  dirs(program: string): string[] {
    let dirs = this.dirsOf.get(program);
    if (!dirs) {
      let real = program;
      try {
        real = realpathSync(program);
      } catch {
        /* the spawn reports it */
      }
      const dir = path.dirname(real);
      const shown = ['/usr', ...SYSTEM_TOPS].some((t) => dir === t || dir.startsWith(`${t}/`));
      dirs = shown ? [] : ['--ro-bind', dir, dir];
      this.dirsOf.set(program, dirs);
    }
    return dirs;
  }
}
