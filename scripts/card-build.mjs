// Builds the review card (src/apps/card/, docs/review-card.md) into one self-contained HTML file: two scripts
// bundled with esbuild, the style, all inline, and a Content-Security-Policy that allows exactly those three (by
// hash) and nothing else: no network, no eval. scripts/bundle.mjs calls it in `npm run build`;
// bench/card-bench.mjs uses it for its pages.
//
// At start (docs/review-card.md#the-start): the first script, early.js (under 1 KB), asks the host
// `ui/initialize` with the App's own params before the second, the bundle (the ext-apps App bridge and what it
// needs), is parsed, and tells the host `initialized` on its answer, so the tool result is on its way while the
// bridge is built. It keeps every message of the parent as it came and hands them to the App's transport
// (early-transport.js, the extension's PostMessageTransport), which passes each, the answer included, through
// the bridge's own source check and schemas: nothing the host sends reaches the card unchecked. Without a
// successful early answer the App makes its own handshake. The bundle is wrapped (`deferred`) to run in a task
// after the one that sends the early request.
//
// Size and start-up (the page ≤ 60 KB gzip, test/apps/card-size.test.ts; first render, bench/card-bench.mjs): the
// App bridge carries the MCP client's Protocol and zod, and zod builds every schema it is given at load. The
// plugins below keep what the card runs and leave the rest out or unbuilt, each safe for the reason by it:
// - `@modelcontextprotocol/client` narrowed to the Protocol class the bridge extends (its index re-exports the
//   whole client, transports and OAuth included);
// - zod's JSON Schema converters and its locale table become stubs that throw (the card converts no schema and
//   shows no zod message);
// - the schemas of the core package and of ext-apps are built only when something in the bundle uses them (each
//   top-level definition a pure expression, so tree shaking drops the unused ones: the OAuth schemas, the requests
//   of servers, the host-side messages of the bridge; the same in the client chunk, whose tables of elicitation
//   keywords held a dozen more), and ext-apps' `import { z }` becomes `import * as z`, so zod keeps only the
//   schema types in use;
// - in the client chunk, the 2026-07-28 wire era (its schemas and codec; an App negotiates no MCP version, so its
//   Protocol speaks the legacy era all its life) and the public spec-type table become stubs that throw;
// - `console.debug`, with which the bridge logs every message it sends and receives, is dropped.
// What the card reads from the host is still validated by the bridge's own schemas (the tool result, the host
// context, the answers to its tool calls); a stub reached by mistake throws, which test/apps/card-browser.test.ts
// catches (it fails on any error in the card's console).
import { build } from 'esbuild';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { EARLY_KEY } from '../src/apps/card/handshake.js';

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

/**
 * Top-level `const` initializers that build something (a call or `new`), each wrapped in a pure IIFE: evaluated in
 * place as before when the bundle uses the constant, dropped by tree shaking (never built) when it does not. Only
 * for modules whose top-level initializers do nothing but build their value (schemas, tables, classes): dropping
 * an unused one then loses nothing else.
 */
export function pureTopLevel(text, file) {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.JS);
  const builds = (n) =>
    ts.isCallExpression(n) || ts.isNewExpression(n) || ts.forEachChild(n, builds) === true;
  const cuts = [];
  for (const st of sf.statements) {
    if (!ts.isVariableStatement(st)) continue;
    for (const d of st.declarationList.declarations)
      if (d.initializer && builds(d.initializer))
        cuts.push([d.initializer.getStart(sf), d.initializer.getEnd()]);
  }
  let out = text;
  for (const [a, b] of cuts.reverse())
    out = `${out.slice(0, a)}/* @__PURE__ */ (() => (${out.slice(a, b)}))()${out.slice(b)}`;
  return out;
}

const CORE_SCHEMAS = /@modelcontextprotocol[\\/]core[\\/]dist[\\/](schemas|auth)-[\w-]+\.mjs$/;
const unusedSchemasUnbuilt = {
  name: 'unused-schemas-unbuilt',
  setup(b) {
    b.onLoad({ filter: CORE_SCHEMAS }, (a) => ({
      contents: pureTopLevel(readFileSync(a.path, 'utf8'), a.path),
      loader: 'js',
    }));
  },
};

/** `text` with the bundler region `//#region name` … `//#endregion` replaced by `code`; the build fails without it. */
function replaceRegion(text, name, code) {
  const start = text.indexOf(`//#region ${name}\n`);
  const end = start < 0 ? -1 : text.indexOf('//#endregion', start);
  if (end < 0) throw new Error(`card build: region ${name} not found; check the plugin against the SDK`);
  return `${text.slice(0, start)}${code}\n${text.slice(end)}`;
}

const fail = (what) => `throw new Error(${JSON.stringify(`${what} is not in the review card`)})`;
// What the App bridge never reaches in the card, in the client chunk the Protocol class lives in (by region).
const CLIENT_CUTS = {
  // The 2026-07-28 era's wire schemas: the era of a Protocol is the one negotiated by the MCP client or server
  // classes, which the App is not; an App speaks the legacy era (codecForVersion(undefined)) all its life.
  '../core-internal/src/wire/rev2026-07-28/buildSchemas.ts': `function buildSchemas2026() { ${fail('The 2026-07-28 wire era')}; }`,
  // Its codec: only the method tables stay (a Protocol asks every era whether a method is a spec method).
  '../core-internal/src/wire/rev2026-07-28/codec.ts': [
    'const rev2026Codec = /* @__PURE__ */ new Proxy(',
    '  { era: "2026-07-28", hasRequestMethod: hasRequestMethod2026, hasNotificationMethod: hasNotificationMethod2026 },',
    `  { get(t, k) { if (k in t) return t[k]; ${fail('The 2026-07-28 wire era')}; } },`,
    ');',
    `function warmWireResultSchemas2026() { ${fail('The 2026-07-28 wire era')}; }`,
  ].join('\n'),
  // The public table of every spec type's schema and guard (a library export; the Protocol never reads it).
  '../core-internal/src/types/specTypeSchema.ts': [
    `const unavailable = /* @__PURE__ */ new Proxy({}, { get() { ${fail('The spec-type table')}; } });`,
    'const specTypeSchemas = unavailable;',
    'const isSpecType = unavailable;',
  ].join('\n'),
};
const CLIENT_CHUNK = /@modelcontextprotocol[\\/]client[\\/]dist[\\/]src-[\w-]+\.mjs$/;
const clientCuts = {
  name: 'client-cuts',
  setup(b) {
    b.onLoad({ filter: CLIENT_CHUNK }, (a) => {
      let text = readFileSync(a.path, 'utf8');
      for (const [name, code] of Object.entries(CLIENT_CUTS)) text = replaceRegion(text, name, code);
      return { contents: pureTopLevel(text, a.path), loader: 'js' };
    });
  },
};

// ext-apps imports zod as `import { z } from "zod/v4"`, a namespace object held in a variable, which keeps every
// zod type alive; `import * as` names the same module namespace and lets the bundler keep only the types used.
const EXT_APPS = /@modelcontextprotocol[\\/]ext-apps[\\/]dist[\\/]src[\\/][\w-]+\.js$/;
const extAppsSchemas = {
  name: 'ext-apps-schemas',
  setup(b) {
    b.onLoad({ filter: EXT_APPS }, (a) => ({
      contents: pureTopLevel(
        readFileSync(a.path, 'utf8').replace(
          /import\s*\{\s*z as (\w+)\s*\}\s*from\s*"zod\/v4"/g,
          (_, name) => `import * as ${name} from "zod/v4"`,
        ),
        a.path,
      ),
      loader: 'js',
    }));
  },
};

/** esbuild's account of the last bundle (bench/card-bench.mjs reports what the page is made of). */
export let lastMeta;

/** The minified script of `entry` (a file of src/apps/card/); `options` over esbuild's (`{ minify: false }` to read it). */
export async function bundleScript(entry = 'card.js', options = {}) {
  const r = await build({
    entryPoints: [path.join(cardSrc, entry)],
    bundle: true,
    format: 'iife',
    minify: true,
    target: 'es2020',
    write: false,
    legalComments: 'none',
    // The bridge logs each message it sends and receives, the whole tool result included, at debug level; a page
    // with a console attached (a host's developer tools, the benchmark's browser) pays to copy each one.
    pure: ['console.debug'],
    plugins: [narrowClient, stubUnusedZod, unusedSchemasUnbuilt, clientCuts, extAppsSchemas],
    metafile: true,
    logLevel: 'warning',
    ...options,
  });
  lastMeta = r.metafile;
  return r.outputFiles[0].text;
}

const sha = (text) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;

/**
 * The page: the template with `script` and the style inline, and `early` (early.js, bundled) as the first script
 * when given, each allowed by its hash and nothing else.
 */
export function page(script, title = 'Changes', early = undefined) {
  const style = readFileSync(path.join(cardSrc, 'style.css'), 'utf8');
  // `</` cannot end an inline script early: esbuild escapes it in strings, and the scripts have no other.
  const inline = (js) => `\n${js.replaceAll('</script', '<\\/script')}\n`;
  const inlineScript = inline(script);
  const inlineEarly = early === undefined ? undefined : inline(early);
  const inlineStyle = `\n${style}\n`;
  const csp = [
    "default-src 'none'",
    `script-src ${[inlineEarly, inlineScript].filter(Boolean).map(sha).join(' ')}`,
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
    .replace(/\s*<script>\s*__EARLY__;?\s*<\/script>/, () =>
      inlineEarly === undefined ? '' : `\n    <script>${inlineEarly}</script>`,
    )
    .replace(/<script>\s*__SCRIPT__;?\s*<\/script>/, () => `<script>${inlineScript}</script>`);
}

/**
 * The bundle as the card's second script: compiled as the page is parsed (a parenthesised function is compiled
 * at once, not parsed twice), run in a task of its own (early.js `later`), after the task that sends the early
 * request to the host (Chromium holds a cross-process `postMessage` until the task that made it ends, and the
 * parser runs both inline scripts in one task). Without early.js (a page that left it out) it runs at once.
 */
export function deferred(script) {
  const key = JSON.stringify(EARLY_KEY);
  return `((run) => { const early = window[${key}]; early ? early.later(run) : run(); })((() => {\n${script}\n}));`;
}

/** The card's page: early.js first, then the bundle (deferred). */
export async function cardPage() {
  return page(deferred(await bundleScript()), 'Changes', await bundleScript('early.js'));
}

/** Writes dist/apps/card/changes.html. */
export async function buildCard(dist = path.join(repo, 'dist')) {
  const out = path.join(dist, 'apps/card');
  mkdirSync(out, { recursive: true });
  writeFileSync(path.join(out, 'changes.html'), await cardPage());
}
