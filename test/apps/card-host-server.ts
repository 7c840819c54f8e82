// The host page of the card's browser tests (test/apps/card-host.js bundled as its script), served from
// 127.0.0.1: card-browser.test.ts and card-early.test.ts show the card in it.
import { createServer, type Server } from 'node:http';
import path from 'node:path';
import { build } from 'esbuild';
import { REPO_ROOT } from '../helpers/server.js';

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
