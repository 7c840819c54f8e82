// `node bench/card-bench.mjs` (docs/review-card.md): the review card's cost to a person's chat. The page's size
// as served (dist/apps/card/changes.html, gzip; target ≤ 60 KB), and its first render in headless Chromium
// (target ≤ 300 ms, in a host that has shown a card before, as a chat has; a host's first card is reported
// beside it): from the iframe's navigation start to the paint of the 20 files (Element Timing), the card on the official host
// bridge (test/apps/card-host.js: AppBridge + PostMessageTransport) fed a real result of the server — a 20-file
// apply_patch, declared MCP Apps — beside the floor in the same run: a static page of the same diff drawn by the
// same renderer (src/apps/card/render.js) without the bridge, in the same host iframe. Median of 9 fresh pages
// each. Results: bench/results/card.{json,md}.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import http from 'node:http';
import { build } from 'esbuild';
import { cardPage, page } from '../scripts/card-build.mjs';
import { benchChromium, ensureBuilt, median, REPO, round, startServer, writeResults } from './lib.mjs';

const RUNS = 9;
const MODERN = '2026-07-28';
const DECLARED = {
  extensions: { 'io.modelcontextprotocol/ui': { mimeTypes: ['text/html;profile=mcp-app'] } },
};

/** One 2026-07-28 request from a client that declared MCP Apps. */
async function call(srv, method, params) {
  const headers = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    authorization: `Bearer ${srv.token}`,
    'mcp-protocol-version': MODERN,
    'mcp-method': method,
  };
  if (method === 'tools/call') headers['mcp-name'] = params.name;
  const meta = {
    'io.modelcontextprotocol/protocolVersion': MODERN,
    'io.modelcontextprotocol/clientCapabilities': DECLARED,
  };
  const res = await fetch(srv.url, {
    method: 'POST',
    headers,
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: meta } }),
  });
  return (await res.json()).result;
}

/** A real result: 20 files added to a fresh workspace by one apply_patch. */
async function realResult() {
  const ws = mkdtempSync(path.join(tmpdir(), 'wb-card-bench-'));
  const srv = await startServer(ws);
  try {
    const parts = ['*** Begin Patch'];
    for (let i = 0; i < 20; i++) {
      parts.push(`*** Add File: card-bench/file-${i}.js`);
      for (let j = 0; j < 30; j++) parts.push(`+export const value${j} = ${i * 100 + j};`);
    }
    parts.push('*** End Patch');
    const r = await call(srv, 'tools/call', { name: 'apply_patch', arguments: { patch: parts.join('\n') } });
    if (r.isError) throw new Error(JSON.stringify(r.content));
    return r;
  } finally {
    await srv.stop();
    rmSync(ws, { recursive: true, force: true });
  }
}

/** The floor's page: the same renderer and style, the diff inline, no bridge. */
async function floorPage(result) {
  const r = await build({
    stdin: {
      contents:
        "import { renderCard } from './render.js';\n" +
        `renderCard(document.getElementById('card'), ${JSON.stringify(result._meta['io.github.workbench-mcp/diff'])});`,
      resolveDir: path.join(REPO, 'src/apps/card'),
    },
    bundle: true,
    minify: true,
    format: 'iife',
    write: false,
  });
  return page(r.outputFiles[0].text, 'Changes (floor)');
}

/** The host page the browser test uses (test/apps/card-host.js), bundled as a page, not imported. */
async function hostServer() {
  const r = await build({
    entryPoints: [path.join(REPO, 'test/apps/card-host.js')],
    bundle: true,
    format: 'iife',
    write: false,
  });
  const script = r.outputFiles[0].text;
  const html =
    '<!doctype html><title>host</title><style>iframe{border:0;width:100%}</style><script src="/h.js"></script>';
  const server = http.createServer((req, res) => res.end(req.url === '/h.js' ? script : html));
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${server.address().port}/` };
}

/**
 * Milliseconds from the iframe's navigation start to the paint of the card's header with the data (Element
 * Timing, read in the frame), one fresh page per run. Nothing of the driver runs in the timed frame before its
 * paint (no locator polling, no injected script: those took 20–60 ms of the frame's one thread, more than the
 * card's own idle moments), only one observer that reads the buffered entry.
 */
async function renders(browser, hostUrl, html, result, warmHost = false) {
  const times = [];
  for (let i = 0; i < RUNS; i++) {
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await ctx.newPage();
    await page.goto(hostUrl);
    await page.waitForFunction(() => typeof globalThis.showCard === 'function');
    const start = () =>
      void page.evaluate(([h, r]) => globalThis.showCard(h, r), [html, result]).catch(() => {});
    // A chat host has shown cards before: its bridge is loaded and compiled. The card's own frame is new.
    if (warmHost) {
      start();
      await page.frameLocator('iframe').locator('ul.files').waitFor({ state: 'attached' });
      await page.evaluate(() => globalThis.document.querySelector('iframe')?.remove());
    }
    const committed = page.waitForEvent(
      'framenavigated',
      (f) => f.parentFrame() === page.mainFrame() && f.url() === 'about:srcdoc',
    );
    start();
    const frame = await committed;
    const painted = await frame.evaluate(
      () =>
        new Promise((resolve) =>
          new globalThis.PerformanceObserver((list) => {
            const e = list.getEntries().find((x) => x.identifier === 'card');
            if (e) resolve(e.renderTime || e.loadTime);
          }).observe({ type: 'element', buffered: true }),
        ),
    );
    times.push(painted);
    await ctx.close();
  }
  return times;
}

async function main() {
  ensureBuilt();
  const built = path.join(REPO, 'dist/apps/card/changes.html');
  const html = existsSync(built) ? readFileSync(built, 'utf8') : await cardPage();
  const gz = gzipSync(html, { level: 9 }).length;
  const rows = [
    {
      target: 'review card page, gzip',
      measured: round(gz / 1024, 1),
      unit: 'KB',
      limit: 60,
      pass: gz <= 60 * 1024,
      note: `${round(Buffer.byteLength(html) / 1024, 1)} KB as served (one file: two scripts, style, CSP)`,
    },
  ];
  const chromium = benchChromium('first render');
  if (!chromium) return writeResults('card', 'Review card', rows);
  const result = await realResult();
  const floor = await floorPage(result);
  const host = await hostServer();
  const browser = await chromium.launch();
  try {
    await renders(browser, host.url, html, result); // untimed: the browser's own first start
    const load = `load average ${loadavg()[0].toFixed(1)} on ${availableParallelism()} cores`;
    for (const warm of [true, false]) {
      const card = await renders(browser, host.url, html, result, warm);
      const base = await renders(browser, host.url, floor, result, warm);
      const med = median(card);
      const where = warm
        ? 'in a host that has shown a card before (its bridge loaded, as in a chat)'
        : "in a host page's first card (the host's bridge compiles as it starts)";
      rows.push({
        target: `review card first render ${where} (iframe navigation → 20 files painted, Chromium)`,
        measured: round(med, 1),
        unit: 'ms',
        limit: warm ? 300 : '–',
        ...(warm ? { pass: med <= 300 } : { op: '', result: 'reported' }),
        note:
          `median of ${RUNS} fresh pages; min ${round(Math.min(...card), 1)} ms, max ${round(Math.max(...card), 1)} ms; ` +
          `floor in the same run (the same diff drawn by a static page, no bridge): ${round(median(base), 1)} ms; ${load}`,
      });
    }
  } finally {
    await browser.close();
    host.server.close();
  }
  writeResults('card', 'Review card', rows);
}

await main();
