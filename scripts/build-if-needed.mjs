// `npm start` builds only when dist/ is missing or older than a source file (decisions.md 10: "builds if needed").
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const newest = (dir) => {
  let t = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    t = Math.max(t, e.isDirectory() ? newest(p) : statSync(p).mtimeMs);
  }
  return t;
};
let built = 0;
try {
  built = statSync(path.join(repo, 'dist/cli/main.js')).mtimeMs;
} catch {
  built = 0;
}
const inputs = Math.max(newest(path.join(repo, 'src')), statSync(path.join(repo, 'package.json')).mtimeMs);
if (built < inputs) {
  const r = spawnSync('npm', ['run', 'build', '--silent'], { cwd: repo, stdio: 'inherit' });
  process.exit(r.status ?? 1);
}
