// Builds the small C helpers (no native Node module) with the first C compiler on PATH (cc, gcc, clang), into
// dist/native/: the sandbox's network bridge (native/wb-netbridge.c; README "Network in safe mode"), the
// Landlock sandbox used where bubblewrap cannot run (native/wb-landlock.c; docs/security-model.md) and the end
// of a sandbox prepared ahead of its command (native/wb-exec.c; docs/security-model.md), the batch lstat of
// listings (native/wb-stat.c; docs/tools.md#limits) and the proxy's data plane (native/wb-netrelay.c). They have no
// dependencies beyond libc; wb-exec is built a second time statically linked (wb-exec-static), for the ripgrep
// jail that holds nothing of the system (src/process/jail/prepared-jail.ts). Where no compiler exists, or it cannot build a file (no C library headers),
// that helper is not built and the build goes on: server_info / check_exec_environment then say what is
// missing (`safe` commands without network; no sandbox where bubblewrap cannot run).
import { spawnSync } from 'node:child_process';
import { accessSync, constants, mkdirSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const HELPERS = [
  { name: 'wb-netbridge', without: '`safe` commands will have no network' },
  { name: 'wb-landlock', without: 'commands will run unconfined where bubblewrap cannot run' },
  { name: 'wb-exec', without: 'every sandbox is set up when its command comes (no sandbox prepared ahead)' },
  {
    name: 'wb-exec',
    out: 'wb-exec-static',
    flags: ['-static'],
    without: 'ripgrep jails of one directory are set up when the search comes (none prepared ahead)',
  },
  { name: 'wb-stat', without: 'listings stat each file from Node (slower on big trees)' },
  { name: 'wb-netrelay', without: 'the proxy moves the bytes of every tunnel in Node (slower downloads)' },
];

function onPath(name) {
  for (const dir of (process.env.PATH ?? '').split(':')) {
    if (!dir) continue;
    try {
      accessSync(path.join(dir, name), constants.X_OK);
      return path.join(dir, name);
    } catch {
      /* next */
    }
  }
  return undefined;
}

const compiler = ['cc', 'gcc', 'clang'].map(onPath).find(Boolean);
for (const h of HELPERS) {
  const source = path.join(repo, `native/${h.name}.c`);
  const out = path.join(repo, `dist/native/${h.out ?? h.name}`);
  if (!compiler) {
    rmSync(out, { force: true });
    process.stderr.write(
      `build-native: no C compiler (cc, gcc or clang) on PATH; ${h.name} not built, so ${h.without}\n`,
    );
    continue;
  }
  mkdirSync(path.dirname(out), { recursive: true });
  const tmp = `${out}.${process.pid}.tmp`;
  const r = spawnSync(compiler, ['-O2', '-Wall', '-Wextra', ...(h.flags ?? []), '-o', tmp, source], {
    encoding: 'utf8',
  });
  if (r.status !== 0) {
    rmSync(tmp, { force: true });
    rmSync(out, { force: true });
    process.stderr.write(
      `build-native: ${path.basename(compiler)} could not build native/${h.name}.c, so ${h.without}:\n${(r.stderr || r.error?.message || '').trim()}\n`,
    );
    continue;
  }
  renameSync(tmp, out);
}
