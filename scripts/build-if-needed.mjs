// `npm start` and `npm install` (prepare) build only when dist/ is missing or older than a source file or the
// build's own inputs (docs/design-notes.md#command-line: "builds if needed"); an installed package (no src/)
// never builds. Without the build tools (TypeScript and esbuild: an `npm install --omit=dev` of a checkout)
// an up-to-date dist/ is used as it is, and a missing one is explained. dist/cli/main.js is the build's last
// output (scripts/bundle.mjs).
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
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
if (!existsSync(path.join(repo, 'src'))) process.exit(0); // an installed package ships dist/ only
let built = 0;
try {
  built = statSync(path.join(repo, 'dist/cli/main.js')).mtimeMs;
} catch {
  built = 0;
}
const inputs = Math.max(
  newest(path.join(repo, 'src')),
  newest(path.join(repo, 'native')),
  ...[
    'package.json',
    'tsconfig.json',
    'tsconfig.build.json',
    'scripts/bundle.mjs',
    'scripts/build-native.mjs',
  ].map((f) => statSync(path.join(repo, f)).mtimeMs),
);
if (built >= inputs) process.exit(0);
const tools = ['node_modules/typescript/bin/tsc', 'node_modules/esbuild/package.json'];
if (!tools.every((t) => existsSync(path.join(repo, t)))) {
  if (built > 0) process.exit(0); // dist/ exists; no compiler to refresh it with
  process.stderr.write(
    'workbench-mcp: dist/ is not built and the build tools are not installed (npm install --omit=dev); run `npm install` ' +
      'once with dev dependencies to build, or install the published package instead.\n',
  );
  process.exit(1);
}
const r = spawnSync('npm', ['run', 'build', '--silent'], { cwd: repo, stdio: 'inherit' });
process.exit(r.status ?? 1);
