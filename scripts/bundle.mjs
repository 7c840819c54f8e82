// The second build step (fast start-up, docs/architecture.md), after tsc has written dist/ file by file: bundles the server
// into dist/cli/main.js (the bin) with esbuild, so start-up reads one file instead of ~200 ES modules, with the
// parts a mode may not need (HTTP and OAuth over stdio, the subcommands) in dist/chunks/, loaded on first use.
// tsc's per-file output stays beside it for tests and scripts; the spawner helper, started as its own small
// process, is bundled apart into one file (dist/helper/spawner.mjs). The native and binary packages
// (@lydell/node-pty, @vscode/ripgrep) stay external and are loaded from node_modules as before.
// Each bundled module keeps the `import.meta.url` of its tsc twin, so paths it computes from it (package.json,
// the spawner helper, the bin the tunnel restarts) mean what they meant before bundling.
import { build } from 'esbuild';
import { copyFileSync, mkdirSync, rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { buildCard } from './card-build.mjs';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const src = path.join(repo, 'src');
const dist = path.join(repo, 'dist');

/**
 * Every output file sits two levels below the package (dist/cli/main.js, dist/chunks/*.js), like tsc's
 * dist/<dir>/<file>.js: `../<path under src>.js` from any of them names the module's tsc twin.
 */
const keepImportMetaUrl = {
  name: 'keep-import-meta-url',
  setup(b) {
    b.onLoad({ filter: /\.ts$/ }, async (args) => {
      const text = await readFile(args.path, 'utf8');
      if (!text.includes('import.meta.url')) return undefined;
      const twin = path.relative(src, args.path).replace(/\.ts$/, '.js').split(path.sep).join('/');
      return {
        contents: text.replaceAll(
          'import.meta.url',
          `new URL(${JSON.stringify(`../${twin}`)}, import.meta.url).href`,
        ),
        loader: 'ts',
      };
    });
  },
};

// The tool summaries (tools/list's data), from tsc's output of the same sources (tools/lazy-catalog.ts).
const { toolSummaries, APP_TOOLS } = await import(pathToFileURL(path.join(dist, 'tools/registry.js')).href);

rmSync(path.join(dist, 'chunks'), { recursive: true, force: true });
await build({
  entryPoints: [path.join(src, 'cli/main.ts')],
  outbase: src,
  outdir: dist,
  chunkNames: 'chunks/[name]-[hash]',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  sourcemap: true,
  external: ['@lydell/node-pty', '@vscode/ripgrep', '@vscode/ripgrep-*'],
  // Bundled CommonJS packages (picomatch, ignore) call require() for Node's own modules.
  banner: {
    js: "import { createRequire as __wbCreateRequire } from 'node:module';\nconst require = __wbCreateRequire(import.meta.url);",
  },
  define: {
    __WORKBENCH_TOOL_SUMMARIES__: JSON.stringify(toolSummaries()),
    __WORKBENCH_APP_TOOL_SUMMARIES__: JSON.stringify(toolSummaries(APP_TOOLS)),
  },
  plugins: [keepImportMetaUrl],
  logLevel: 'warning',
});

// The spawner helper as one self-contained file (node built-ins only): the server forks it from a private copy in
// its runtime directory (src/process/spawner/spawner.ts), never from dist/, which may lie inside the workspace a command
// can write (docs/security-model.md, rule B). `.mjs`: an ES module wherever the copy lies.
await build({
  entryPoints: [path.join(src, 'process/spawner/spawner-main.ts')],
  outfile: path.join(dist, 'helper/spawner.mjs'),
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  logLevel: 'warning',
});

// The operator's console page (src/console/page/): served by dist/console/server.js from dist/console/page/.
// No framework: the script is bundled with what it imports (src/core/text/visible-text.ts) and minified, the HTML and
// CSS copied.
const pageSrc = path.join(src, 'console/page');
const pageOut = path.join(dist, 'console/page');
mkdirSync(pageOut, { recursive: true });
for (const f of ['index.html', 'style.css']) copyFileSync(path.join(pageSrc, f), path.join(pageOut, f));
await build({
  entryPoints: [path.join(pageSrc, 'app.js')],
  outfile: path.join(pageOut, 'app.js'),
  bundle: true,
  format: 'iife',
  minify: true,
  target: 'es2020',
  logLevel: 'warning',
});

// The review card (src/apps/card/): one self-contained page, served to MCP Apps hosts by
// dist/protocol/ui-resources.js (docs/review-card.md).
await buildCard(dist);
