// Builds (and removes) the hostile-size trees of the limits tests quickly, in a process of its own (it changes
// directory level by level, which a test process must not do):
//   node make-tree.mjs nested DIR LEVELS NAME     LEVELS nested directories DIR/NAME/NAME/…, a file deep.txt at
//                                                 the bottom holding "needle" (paths far beyond PATH_MAX)
//   node make-tree.mjs remove-nested DIR NAME     removes such a chain bottom-up (rm -rf is quadratic on it)
//   node make-tree.mjs files DIR COUNT PER_DIR    COUNT files "dNNN/fNNNN.txt", PER_DIR per directory, each
//                                                 holding "needle"
import { mkdirSync, readdirSync, rmdirSync, unlinkSync, writeFileSync } from 'node:fs';

const [mode, dir, a, b] = process.argv.slice(2);

if (mode === 'nested') {
  process.chdir(dir);
  for (let i = 0; i < Number(a); i++) {
    mkdirSync(b);
    process.chdir(b);
  }
  writeFileSync('deep.txt', 'needle\n');
} else if (mode === 'remove-nested') {
  process.chdir(dir);
  let depth = 0;
  while (readdirSync('.').includes(a)) {
    process.chdir(a);
    depth++;
  }
  for (const f of readdirSync('.')) unlinkSync(f);
  for (; depth > 0; depth--) {
    process.chdir('..');
    rmdirSync(a);
  }
} else if (mode === 'files') {
  const count = Number(a);
  const per = Number(b);
  for (let i = 0; i < count; i++) {
    const d = `${dir}/d${String(Math.floor(i / per)).padStart(4, '0')}`;
    if (i % per === 0) mkdirSync(d, { recursive: true });
    writeFileSync(`${d}/f${String(i % per).padStart(5, '0')}.txt`, 'needle\n');
  }
} else {
  process.stderr.write(`unknown mode ${mode}\n`);
  process.exit(2);
}
