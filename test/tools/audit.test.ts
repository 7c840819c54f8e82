// docs/configuration.md (SERVICE_AUDIT_LOG): one JSON line per tool
// call — who, what, result — with secret-looking argument values redacted.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { callTool } from '../helpers/rpc.js';
import { startInProcess, type InProcessServer } from '../helpers/server.js';
import { makeWorkspace, type TempWorkspace } from '../helpers/workspace.js';

let ws: TempWorkspace;
let logDir: TempWorkspace;
let srv: InProcessServer;
beforeAll(async () => {
  ws = makeWorkspace({ 'a.txt': 'a\n' });
  logDir = makeWorkspace();
  srv = await startInProcess({
    workspace: ws.dir,
    env: { SERVICE_AUDIT_LOG: path.join(logDir.dir, 'audit.jsonl') },
  });
});
afterAll(async () => {
  await srv.close();
  ws.cleanup();
  logDir.cleanup();
});

it('records every tool call with its principal, arguments and result code', async () => {
  await callTool(srv.url, 'read_file', { path: 'a.txt' });
  await callTool(srv.url, 'read_file', { path: '../etc/passwd' });
  await callTool(srv.url, 'search_text', { query: 'a', token: 'should-not-appear' });
  const lines = readFileSync(path.join(logDir.dir, 'audit.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  expect(lines).toHaveLength(3);
  expect(lines[0]).toMatchObject({
    who: 'bearer:token#1',
    tool: 'read_file',
    arguments: { path: 'a.txt' },
    ok: true,
  });
  expect(lines[1]).toMatchObject({ tool: 'read_file', ok: false, error: 'PATH_OUTSIDE_WORKSPACE' });
  expect(lines[2]).toMatchObject({
    tool: 'search_text',
    ok: false,
    error: 'INVALID_ARGUMENT',
    arguments: { token: '[redacted]' },
  });
  expect(Date.parse(lines[0].time)).not.toBeNaN();
  expect(readFileSync(path.join(logDir.dir, 'audit.jsonl'), 'utf8')).not.toContain('should-not-appear');
});
