// Builds the sandbox's network bridge (native/wb-netbridge.c → dist/native/wb-netbridge; README "Network in safe
// mode") with the first C compiler on PATH (cc, gcc, clang). It has no dependencies beyond libc. Where no
// compiler exists, or it cannot build the file (no C library headers), nothing is built and the build goes
// on: `safe` commands then have no network at all, and server_info / check_exec_environment say why.
import { spawnSync } from 'node:child_process';
import { accessSync, constants, mkdirSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const source = path.join(repo, 'native/wb-netbridge.c');
const out = path.join(repo, 'dist/native/wb-netbridge');

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
if (!compiler) {
  rmSync(out, { force: true });
  process.stderr.write(
    'build-native: no C compiler (cc, gcc or clang) on PATH; wb-netbridge not built, so `safe` commands will have no network\n',
  );
  process.exit(0);
}
mkdirSync(path.dirname(out), { recursive: true });
const tmp = `${out}.${process.pid}.tmp`;
const r = spawnSync(compiler, ['-O2', '-Wall', '-Wextra', '-o', tmp, source], { encoding: 'utf8' });
if (r.status !== 0) {
  rmSync(tmp, { force: true });
  rmSync(out, { force: true });
  process.stderr.write(
    `build-native: ${path.basename(compiler)} could not build native/wb-netbridge.c, so \`safe\` commands will have no network:\n${(r.stderr || r.error?.message || '').trim()}\n`,
  );
  process.exit(0);
}
renameSync(tmp, out);
