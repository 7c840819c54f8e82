// The host page of the card's browser tests (test/apps/card-host.js bundled as its script), served from
// 127.0.0.1: card-browser.test.ts and card-early.test.ts show the card in it; and what both set up around it
// (the spawned bin on a workspace, an official SDK client declaring the MCP Apps extension, the card's HTML).
import { createServer, type Server } from 'node:http';
import path from 'node:path';
import { build } from 'esbuild';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { REPO_ROOT, startServer, TEST_TOKEN, type SpawnedServer } from '../helpers/server.js';
import { makeWorkspace, type TempWorkspace } from '../helpers/workspace.js';
import { importCached, type Playwright } from '../helpers/cached-tools.js';
import { CHROMIUM, CHROMIUM_ARGS } from '../helpers/chromium.js';

type Any = any; // eslint-disable-line @typescript-eslint/no-explicit-any

export async function hostServer(): Promise<{ server: Server; url: string }> {
  const r = await build({
    entryPoints: [path.join(REPO_ROOT, 'test/apps/card-host.js')],
    bundle: true,
    format: 'iife',
    write: false,
    logLevel: 'warning',
  });
  const script = r.outputFiles[0]!.text;
  const html =
    '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Host</title>' +
    '<style>iframe{border:0;width:100%;height:400px;display:block}</style></head>' +
    '<body><h1 style="font-size:1px">host</h1><script src="/host.js"></script></body></html>';
  const server = createServer((req, res) => {
    const js = req.url === '/host.js';
    res.writeHead(200, { 'content-type': js ? 'text/javascript' : 'text/html' });
    res.end(js ? script : html);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return { server, url: `http://127.0.0.1:${port}/` };
}

/**
 * Chromium on the host page at 1280 px, its console errors and page errors pushed to `errors`; `before` runs on
 * the page before it loads (listeners, exposed functions). Resolves once the host's showCard is defined.
 */
export async function openHost(
  url: string,
  errors: string[],
  before?: (page: Any) => Promise<void> | void,
): Promise<{ browser: Any; page: Any }> {
  const { chromium } = await importCached<Playwright>('playwright-core');
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, timeout: 60_000 });
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
  page.on('console', (m: Any) => m.type() === 'error' && errors.push(m.text()));
  page.on('pageerror', (e: Any) => errors.push(String(e?.message ?? e)));
  await before?.(page);
  await page.goto(url);
  await page.waitForFunction(() => typeof (globalThis as Any).showCard === 'function');
  return { browser, page };
}

export const CARD = 'ui://workbench/changes.html';
export const CARD_DIFF = 'io.github.workbench-mcp/diff';
const DECLARED = {
  extensions: { 'io.modelcontextprotocol/ui': { mimeTypes: ['text/html;profile=mcp-app'] } },
};

/** The bin on a workspace of `files`, the host page, a connected client and the card's HTML; close() ends all. */
export interface CardRig {
  ws: TempWorkspace;
  srv: SpawnedServer;
  host: { server: Server; url: string };
  client: Any;
  html: string;
  close(): Promise<void>;
}

export async function startCardRig(files: Record<string, string>, clientName: string): Promise<CardRig> {
  const ws = makeWorkspace(files);
  const [srv, host] = await Promise.all([startServer({ workspace: ws.dir }), hostServer()]);
  const client: Any = new Client({ name: clientName, version: '1' }, { capabilities: DECLARED as Any });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(srv.url), {
      requestInit: { headers: { authorization: `Bearer ${TEST_TOKEN}` } },
    }),
  );
  const html = (await client.readResource({ uri: CARD })).contents[0].text;
  return {
    ws,
    srv,
    host,
    client,
    html,
    close: async () => {
      await client.close();
      await srv.stop();
      host.server.close();
      ws.cleanup();
    },
  };
}
