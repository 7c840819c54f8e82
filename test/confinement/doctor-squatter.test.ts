// `workbench-mcp doctor` against a squatter (src/cli/doctor.ts: the token from SERVICE_AUTH_TOKEN is sent
// with tools/list): another process listening on the loopback port doctor is told to check, answering
// with a copy of a real server's public documents (its server card and its 401 challenge) and recording
// every request. The configured token must never reach it — the public documents prove nothing about who
// answers them — and doctor must fail, saying the endpoint is not this server, with exit 1.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcess, TEST_TOKEN } from '../helpers/server.js';
import { runDoctor } from '../helpers/tunnel-run.js';
import { makeWorkspace, type TempWorkspace } from '../helpers/workspace.js';

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

let ws: TempWorkspace;
let squatter: http.Server;
let port: number;
const seen: Seen[] = [];

beforeAll(async () => {
  // A real server, only to copy what it shows anybody: its card and its answer without credentials.
  ws = makeWorkspace({ 'README.md': '# squatted\n' });
  const real = await startInProcess({ workspace: ws.dir });
  const card = await (await fetch(`${real.base}/.well-known/mcp.json`)).text();
  const challenge = await fetch(real.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
  });
  const challengeBody = await challenge.text();
  const wwwAuth = challenge.headers.get('www-authenticate') ?? 'Bearer realm="workbench-mcp"';
  await real.close();

  squatter = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      if (req.method === 'GET' && req.url === '/.well-known/mcp.json') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(card);
      } else if (req.method === 'POST' && req.url === '/mcp' && !req.headers.authorization) {
        res
          .writeHead(401, { 'content-type': 'application/json', 'www-authenticate': wwwAuth })
          .end(challengeBody);
      } else if (req.method === 'POST' && req.url === '/mcp') {
        // What it came for: a credential. Answer like a server that accepted it.
        let id: unknown = 1;
        let version = '2025-06-18';
        try {
          const msg = JSON.parse(body);
          id = msg.id;
          version = msg.params?.protocolVersion ?? version;
        } catch {
          /* not JSON */
        }
        const result = {
          protocolVersion: version,
          capabilities: { tools: {} },
          serverInfo: { name: 'workbench-mcp', version: '0' },
          tools: [],
        };
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ jsonrpc: '2.0', id, result }));
      } else res.writeHead(404).end();
    });
  });
  await new Promise<void>((r) => squatter.listen(0, '127.0.0.1', () => r()));
  port = (squatter.address() as AddressInfo).port;
});

afterAll(async () => {
  squatter?.closeAllConnections();
  await new Promise<void>((r) => (squatter ? squatter.close(() => r()) : r()));
  ws?.cleanup();
});

describe('doctor against a squatter on its port', () => {
  it('never sends SERVICE_AUTH_TOKEN to a process that only copies the public documents; the check fails, exit 1', async () => {
    const r = await runDoctor(['--port', String(port)], {
      PATH: process.env.PATH ?? '',
      SERVICE_AUTH_TOKEN: TEST_TOKEN,
    });
    console.log(`[doctor squatter] exit ${r.code}\n${r.out}${r.err}`);
    expect(seen.length, 'doctor never asked the squatter anything').toBeGreaterThan(0);
    const b64 = Buffer.from(TEST_TOKEN).toString('base64');
    const carrying = seen
      .filter((s) => {
        const all = `${s.url}\n${JSON.stringify(s.headers)}\n${s.body}`;
        return all.includes(TEST_TOKEN) || all.includes(b64);
      })
      .map((s) => `${s.method} ${s.url}`);
    expect(carrying, 'requests that carried the token to the squatter').toEqual([]);
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/^FAIL .*server/im);
  });
});
