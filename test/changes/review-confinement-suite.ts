// Where review points live (docs/security-model.md#review-points), with the server started as root or as nobody,
// in bubblewrap or (a variant) in the Landlock jail of a simulated container: show_changes works there (git
// writes its private repository through the one writable directory its jail is given); the private repository
// is in the runtime directory and nothing lands in the workspace's .git; a command can neither read nor write
// it; and a filter driver the repository's own configuration defines never runs while a point is taken.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, HUNG_MS } from '../exec/exec-support.js';
import type { SuiteVariant } from '../helpers/container-sim.js';
import {
  canRunAs,
  NOBODY,
  markerFile,
  ownedDir,
  startBinAs,
  type BinServer,
  type RunAs,
} from '../helpers/hostile-bin.js';
import { git } from '../helpers/workspace.js';

/** Directories named `name` below `dir` (the test runs as root and sees the whole runtime root). */
function findDirs(dir: string, name: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (!e.isDirectory()) continue;
    const p = path.join(dir, e.name);
    if (e.name === name) out.push(p);
    else out.push(...findDirs(p, name));
  }
  return out;
}

export function reviewSuite(as: RunAs, variant?: SuiteVariant): void {
  const d = canRunAs(as, 'the review points confinement', variant?.need) ? describe : describe.skip;
  const label = variant ? `, ${variant.label}` : '';
  d(`review points are the server's own, server as ${as}${label}`, () => {
    let ws: string;
    let rt: string;
    let marker: string;
    let srv: BinServer;
    const g = (...args: string[]) => git(ws, '-c', 'safe.directory=*', ...args);

    beforeAll(async () => {
      ws = ownedDir(tmpdir(), 'wb-review-ws-', as);
      rt = ownedDir(tmpdir(), 'wb-review-rt-', as);
      marker = markerFile(tmpdir(), 'wb-review-canary-', as);
      g('init', '-q', '-b', 'main');
      writeFileSync(path.join(ws, 'a.txt'), 'alpha\n');
      writeFileSync(path.join(ws, '.gitattributes'), '*.txt filter=zz\n');
      g('add', '-A');
      g('commit', '-q', '-m', 'first');
      // The repository's own configuration names a clean filter that would write the marker.
      g('config', 'filter.zz.clean', `sh -c 'id >> ${marker}; cat'`);
      if (as === 'nobody') execFileSync('chown', ['-R', `${NOBODY}:${NOBODY}`, ws]);
      srv = await startBinAs({
        workspace: ws,
        runtimeRoot: rt,
        as,
        launcher: variant?.launcher(),
        env: variant?.env,
      });
    }, HUNG_MS);

    afterAll(async () => {
      await srv?.stop();
      for (const p of [ws, rt, path.dirname(marker)]) if (p) rmSync(p, { recursive: true, force: true });
    });

    it('show_changes takes points in a private repository of the runtime directory, none in .git', async () => {
      const gitBefore = execFileSync('find', [
        path.join(ws, '.git'),
        '-newer',
        path.join(ws, '.git', 'HEAD'),
      ]).toString();
      const first = await call(srv.url, 'show_changes', {});
      expect(first.isError, first.text).toBe(false);
      writeFileSync(path.join(ws, 'a.txt'), 'alpha\nbeta\n');
      writeFileSync(path.join(ws, 'b.txt'), 'new\n');
      const second = await call(srv.url, 'show_changes', {});
      expect(second.isError, second.text).toBe(false);
      expect(second.sc.files).toEqual(['M a.txt +1', 'A b.txt +1']);
      const priv = findDirs(rt, 'review');
      expect(priv).toHaveLength(1);
      expect(
        existsSync(path.join(priv[0]!, 'git', 'refs', 'workbench', 'review', second.sc.point as string)),
      ).toBe(true);
      expect(g('for-each-ref', '--format=%(refname)').trim()).toBe('refs/heads/main');
      expect(
        execFileSync('find', [path.join(ws, '.git'), '-newer', path.join(ws, '.git', 'HEAD')]).toString(),
      ).toBe(gitBefore);
      // The filter the repository configured never ran (neither the user's config nor a program of it is read).
      expect(readFileSync(marker, 'utf8')).toBe('');
    });

    it('a command can neither read nor write the private repository', async () => {
      const priv = path.join(findDirs(rt, 'review')[0]!, 'git');
      const probe = [
        `cat ${priv}/HEAD && echo READ-HEAD`,
        `ls ${priv}/refs/workbench/review && echo LISTED`,
        `touch ${priv}/planted && echo WROTE`,
        `mkdir ${priv}/refs/workbench/planted-dir && echo MADE`,
      ].join('; ');
      const r = await call(srv.url, 'exec_command', { cmd: probe, yield_time_ms: 20_000 });
      expect(r.isError, r.text).toBe(false);
      const out = String(r.sc.output ?? r.text);
      for (const word of ['READ-HEAD', 'LISTED', 'WROTE', 'MADE']) expect(out).not.toContain(word);
      expect(existsSync(path.join(priv, 'planted'))).toBe(false);
      expect(existsSync(path.join(priv, 'refs', 'workbench', 'planted-dir'))).toBe(false);
      // And show_changes still works after the attempt.
      expect((await call(srv.url, 'show_changes', {})).isError).toBe(false);
    });
  });
}
