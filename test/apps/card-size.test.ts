// The review card's page within its budget (docs/review-card.md#the-page): at most 60 KB gzip as built into
// dist/apps/card/changes.html, measured as bench/card-bench.mjs measures it (gzip level 9), and the build's
// schema plugin (scripts/card-build.mjs pureTopLevel): a schema constant the bundle uses is built as before, in
// its place; one it does not use is left out and never built. The bridge still working with what the build
// left out is test/apps/card-browser.test.ts.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { runInNewContext } from 'node:vm';
import { gzipSync } from 'node:zlib';
import { build, type Plugin } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/server.js';

const BUILT = path.join(REPO_ROOT, 'dist/apps/card/changes.html');
const LIMIT = 60 * 1024;

type CardBuild = { pureTopLevel: (text: string, file: string) => string };
const cardBuild = async (): Promise<CardBuild> =>
  (await import(pathToFileURL(path.join(REPO_ROOT, 'scripts/card-build.mjs')).href)) as CardBuild;

/** Bundles an entry that uses A, B and T of a schemas module (C unused), each built through `note`. */
async function bundleSchemas(transform: (text: string) => string): Promise<string> {
  const schemas = [
    "import { note } from 'note';",
    "export const A = note('A', { kind: 'a' });",
    "export const B = note('B', { of: A });",
    "export const C = note('C', { kind: 'c' });",
    "export const T = { made: note('T', 1) };",
    "export const NAME = 'schemas';",
  ].join('\n');
  const plugin: Plugin = {
    name: 'virtual',
    setup(b) {
      b.onResolve({ filter: /^(schemas|note)$/ }, (a) => ({ path: a.path, namespace: 'v' }));
      b.onLoad({ filter: /^schemas$/, namespace: 'v' }, () => ({
        contents: transform(schemas),
        loader: 'js',
      }));
      b.onLoad({ filter: /^note$/, namespace: 'v' }, () => ({
        contents: 'export function note(n, v) { order.push(n); return v; }',
        loader: 'js',
      }));
    },
  };
  const r = await build({
    stdin: { contents: "import { B, NAME, T } from 'schemas'; result = { B, NAME, T };" },
    bundle: true,
    format: 'iife',
    minify: true,
    write: false,
    plugins: [plugin],
    logLevel: 'silent',
  });
  return r.outputFiles[0]!.text;
}

describe('the review card page', () => {
  it('is at most 60 KB gzip as built (dist/apps/card/changes.html, gzip level 9)', () => {
    expect(existsSync(BUILT), `${BUILT} is missing: run \`npm run build\` first`).toBe(true);
    const gz = gzipSync(readFileSync(BUILT), { level: 9 }).length;
    expect(gz, `${(gz / 1024).toFixed(1)} KB gzip`).toBeLessThanOrEqual(LIMIT);
  });

  it('the schema plugin: used constants are built in their order with their values, unused ones never', async () => {
    const { pureTopLevel } = await cardBuild();
    const run = (code: string) => {
      const ctx = { order: [] as string[], result: undefined as unknown };
      runInNewContext(code, ctx);
      return ctx;
    };
    const plain = run(await bundleSchemas((t) => t));
    expect(plain.order).toEqual(['A', 'B', 'C', 'T']); // without the plugin, C is built though nothing uses it
    const cut = run(await bundleSchemas((t) => pureTopLevel(t, 'schemas.js')));
    expect(cut.order).toEqual(['A', 'B', 'T']);
    expect(cut.result).toEqual({ B: { of: { kind: 'a' } }, NAME: 'schemas', T: { made: 1 } });
  });
});
