// What moving a listing's pages costs by itself (bench/scale-bench.mjs): a bare node:http server, in its own
// process as the real server is, that answers the i-th POST with the i-th of the response bodies it was given
// (the same bytes the real server sent), doing nothing else. Timing a full listing against it with the same
// client gives the HTTP round trips, the serialised bytes and the client's parsing alone, without a walk.
//   startPageFloor(bodies) -> { url, stop }        (bodies: JSON-RPC response strings, in the order asked)
//   node bench/page-floor.mjs --serve FILE         (the child: FILE holds the bodies, one JSON string a line)
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

function serve(file) {
  const bodies = readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => Buffer.from(JSON.parse(l)));
  let next = 0;
  const srv = http.createServer((req, res) => {
    req.on('data', () => {});
    req.on('end', () => {
      const body = bodies[next++ % bodies.length];
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length });
      res.end(body);
    });
  });
  srv.listen(0, '127.0.0.1', () => process.stdout.write(`${srv.address().port}\n`));
  // Ends with its parent: stdin closes when the parent goes away.
  process.stdin.on('end', () => process.exit(0));
  process.stdin.resume();
}

export async function startPageFloor(bodies) {
  const dir = mkdtempSync(path.join(tmpdir(), 'wb-page-floor-'));
  const file = path.join(dir, 'bodies.jsonl');
  writeFileSync(file, bodies.map((b) => JSON.stringify(b)).join('\n') + '\n');
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), '--serve', file], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const port = await new Promise((resolve, reject) => {
    let buf = '';
    child.stdout.on('data', (c) => {
      buf += c;
      if (buf.includes('\n')) resolve(Number(buf.trim()));
    });
    child.on('exit', (code) => reject(new Error(`the page floor exited ${code}`)));
  });
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    stop: () =>
      new Promise((r) => {
        child.once('exit', r);
        child.stdin.end();
        rmSync(dir, { recursive: true, force: true });
      }),
  };
}

if (process.argv[2] === '--serve') serve(process.argv[3]);
