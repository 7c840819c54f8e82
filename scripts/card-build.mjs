// Builds the review card (src/apps/card/, docs/review-card.md) into one self-contained HTML file: the script
// bundled with esbuild (the ext-apps App bridge and what it needs), the style, both inline, and a
// Content-Security-Policy that allows exactly those two (by hash) and nothing else: no network, no eval.
// scripts/bundle.mjs calls it in `npm run build`; bench/card-bench.mjs uses it for its pages.
//
// Size: the App bridge carries the MCP client's Protocol and zod. Three esbuild plugins keep what the card runs
// and drop the rest: `@modelcontextprotocol/client` is narrowed to the Protocol class the bridge extends (its
// index re-exports the whole client, transports and OAuth included); zod's JSON Schema converters and its
// locale table (never used: the card converts no schema and shows no zod message) become stubs that throw.
import { build } from 'esbuild';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const cardSrc = path.join(repo, 'src/apps/card');

/** The MCP client's Protocol class, from the chunk its index re-exports it from. */
function protocolOnly() {
  const index = fileURLToPath(import.meta.resolve('@modelcontextprotocol/client'));
  const text = readFileSync(index, 'utf8');
  const m = /import \{([^}]*)\} from "(\.\/[^"]+)";/g;
  for (const [, names, from] of text.matchAll(m)) {
    const p = /(?:^|,)\s*(\w+) as Protocol\s*(?:,|$)/.exec(names);
    if (p)
      return {
        dir: path.dirname(index),
        contents: `export { ${p[1]} as Protocol } from ${JSON.stringify(from)};`,
      };
  }
  return undefined;
}

const narrowClient = {
  name: 'narrow-mcp-client',
  setup(b) {
    const shim = protocolOnly();
    if (!shim) return;
    b.onResolve({ filter: /^@modelcontextprotocol\/client$/ }, (a) =>
      a.importer.includes('ext-apps') ? { path: 'protocol-only', namespace: 'narrow' } : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'narrow' }, () => ({
      contents: shim.contents,
      resolveDir: shim.dir,
      loader: 'js',
    }));
  },
};

const UNUSED_ZOD =
  /zod[\\/]v4[\\/](core[\\/](to-json-schema|json-schema-processors|json-schema-generator|compile)|classic[\\/]from-json-schema)\.js$/;
const stubUnusedZod = {
  name: 'stub-unused-zod',
  setup(b) {
    b.onLoad({ filter: UNUSED_ZOD }, (a) => {
      const names = [...readFileSync(a.path, 'utf8').matchAll(/export (?:function|const|class|let) (\w+)/g)];
      // A schema is built with its converters (`create…Method`): they return the converter, which throws.
      const fail = (n) => `throw new Error('zod ${n} is not in the review card')`;
      const stub = (n) =>
        n === 'INVALID'
          ? `export const INVALID = Symbol.for('zod.compile.invalid');`
          : n.startsWith('create')
            ? `export function ${n}() { return () => { ${fail(n)}; }; }`
            : `export function ${n}() { ${fail(n)}; }`;
      return { contents: names.map((m) => stub(m[1])).join('\n'), loader: 'js' };
    });
    b.onLoad({ filter: /zod[\\/]v4[\\/]locales[\\/]index\.js$/ }, () => ({
      contents: 'export { default as en } from "./en.js";',
      loader: 'js',
    }));
  },
};

/** esbuild's account of the last bundle (bench/card-bench.mjs reports what the page is made of). */
export let lastMeta;

/** The minified script of `entry` (a file of src/apps/card/). */
export async function bundleScript(entry = 'card.js') {
  const r = await build({
    entryPoints: [path.join(cardSrc, entry)],
    bundle: true,
    format: 'iife',
    minify: true,
    target: 'es2020',
    write: false,
    legalComments: 'none',
    plugins: [narrowClient, stubUnusedZod],
    metafile: true,
    logLevel: 'warning',
  });
  lastMeta = r.metafile;
  return r.outputFiles[0].text;
}

const sha = (text) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;

/** The page: the template with `script` and the style inline, allowed by hash and nothing else. */
export function page(script, title = 'Changes') {
  const style = readFileSync(path.join(cardSrc, 'style.css'), 'utf8');
  // `</` cannot end the inline script early: esbuild escapes it in strings, and the script has no other.
  const safe = script.replaceAll('</script', '<\\/script');
  const inlineScript = `\n${safe}\n`;
  const inlineStyle = `\n${style}\n`;
  const csp = [
    "default-src 'none'",
    `script-src ${sha(inlineScript)}`,
    `style-src ${sha(inlineStyle)}`,
    "img-src 'none'",
    "font-src 'none'",
    "connect-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
  ].join('; ');
  // The template's placeholders, whatever prettier made of the lines around them.
  return readFileSync(path.join(cardSrc, 'changes.html'), 'utf8')
    .replace('<title>Changes</title>', () => `<title>${title}</title>`)
    .replace('__CSP__', () => csp)
    .replace(/<style>\s*__STYLE__;?\s*<\/style>/, () => `<style>${inlineStyle}</style>`)
    .replace(/<script>\s*__SCRIPT__;?\s*<\/script>/, () => `<script>${inlineScript}</script>`);
}

/** Writes dist/apps/card/changes.html. */
export async function buildCard(dist = path.join(repo, 'dist')) {
  const out = path.join(dist, 'apps/card');
  mkdirSync(out, { recursive: true });
  writeFileSync(path.join(out, 'changes.html'), page(await bundleScript()));
}
