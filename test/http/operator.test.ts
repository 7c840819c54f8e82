// The operator's endpoints (docs/operations.md): /healthz and /readyz answer without credentials and say one
// status word — /readyz "starting" (503) until the sandbox probe is done and the command helper is up, then "ok";
// /metrics is refused without the credentials /mcp takes (the same 401 challenge) and, with them, is Prometheus
// text that a strict reader of the exposition format (test/helpers/prom-text.ts) reads into the expected series
// after a few calls; a valid W3C traceparent in params._meta reaches the audit line of its call, an invalid one does not.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parsePromText, type PromFamily } from '../helpers/prom-text.js';
import { callTool, handshake } from '../helpers/rpc.js';
import { startInProcess, TEST_TOKEN, type InProcessServer } from '../helpers/server.js';
import { makeWorkspace, type TempWorkspace } from '../helpers/workspace.js';

let ws: TempWorkspace;
let srv: InProcessServer;
let auditFile: string;

beforeAll(async () => {
  ws = makeWorkspace({ 'a.txt': 'hello\n' });
  auditFile = path.join(ws.dir, '..', `${path.basename(ws.dir)}-audit.log`);
  srv = await startInProcess({ workspace: ws.dir, env: { SERVICE_AUDIT_LOG: auditFile } });
});
afterAll(async () => {
  await srv?.close();
  ws?.cleanup();
});

const get = (p: string, headers: Record<string, string> = {}) => fetch(`${srv.base}${p}`, { headers });

describe('/healthz and /readyz: no credentials, one status word', () => {
  it('/healthz is 200 "ok" while the process answers', async () => {
    const r = await get('/healthz');
    expect(r.status).toBe(200);
    expect(await r.text()).toBe('ok\n');
    expect((await fetch(`${srv.base}/healthz`, { method: 'POST' })).status).toBe(405);
  });

  it('/readyz is 503 "starting" before the command helper is up, 200 "ok" after', async () => {
    const before = await get('/readyz');
    expect(before.status).toBe(503);
    expect(await before.text()).toBe('starting\n');
    srv.runtime.commands.warm();
    await srv.runtime.commands.whenUp();
    const after = await get('/readyz');
    expect(after.status).toBe(200);
    expect(await after.text()).toBe('ok\n');
    expect(after.headers.get('www-authenticate')).toBeNull();
  });
});

describe('/metrics', () => {
  it('is refused without credentials with the same challenge as /mcp', async () => {
    const mcp = await fetch(srv.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"jsonrpc":"2.0","id":1,"method":"ping"}',
    });
    const none = await get('/metrics');
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe(mcp.headers.get('www-authenticate'));
    const wrong = await get('/metrics', { authorization: 'Bearer not-the-token' });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('www-authenticate')).toContain('error="invalid_token"');
  });

  it('is Prometheus text with the expected series after a few calls', async () => {
    await handshake(srv.url, 1, 'tools/list', {});
    expect((await callTool(srv.url, 'read_file', { path: 'a.txt' })).isError).toBe(false);
    expect(
      (await callTool(srv.url, 'read_file', { path: '../outside.txt' })).structuredContent.error.code,
    ).toBe('PATH_OUTSIDE_WORKSPACE');
    await handshake(srv.url, 2, 'tools/call', { name: 'no_such_tool', arguments: {} });
    const ran = await callTool(srv.url, 'exec_command', { cmd: 'true', yield_time_ms: 30_000 });
    expect(ran.structuredContent.status).toBe('exited');
    const r = await get('/metrics', { authorization: `Bearer ${TEST_TOKEN}` });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const families = parsePromText(await r.text());
    const family = (name: string) => {
      const f = families.find((x) => x.name === name);
      expect(f, name).toBeDefined();
      return f as PromFamily;
    };
    const value = (name: string, labels: Record<string, string>, sample = name) =>
      family(name).samples.find(
        (m) => m.name === sample && Object.entries(labels).every(([k, v]) => m.labels[k] === v),
      )?.value ?? NaN;
    const call = { era: 'handshake', method: 'tools/call' };
    expect(family('workbench_requests_total').type).toBe('counter');
    expect(value('workbench_requests_total', { ...call, tool: 'read_file', outcome: 'ok' })).toBe(1);
    expect(
      value('workbench_requests_total', { ...call, tool: 'read_file', outcome: 'PATH_OUTSIDE_WORKSPACE' }),
    ).toBe(1);
    expect(value('workbench_requests_total', { ...call, tool: 'unknown', outcome: 'rpc_error' })).toBe(1);
    expect(value('workbench_requests_total', { method: 'tools/list', outcome: 'ok' })).toBeGreaterThanOrEqual(
      1,
    );
    expect(value('workbench_sandbox_blocks_total', { code: 'PATH_OUTSIDE_WORKSPACE' })).toBe(1);
    expect(value('workbench_auth_failures_total', { reason: 'unauthorized' })).toBeGreaterThanOrEqual(1);
    expect(value('workbench_auth_failures_total', { reason: 'invalid_token' })).toBeGreaterThanOrEqual(1);
    const hist = 'workbench_request_duration_seconds';
    expect(family(hist).type).toBe('histogram');
    const reads = { method: 'tools/call', tool: 'read_file' };
    expect(value(hist, reads, `${hist}_count`)).toBe(2);
    expect(value(hist, { ...reads, le: '+Inf' }, `${hist}_bucket`)).toBe(2);
    expect(value(hist, reads, `${hist}_sum`)).toBeGreaterThan(0);
    for (const g of ['workbench_commands_running', 'workbench_commands_retained']) {
      expect(family(g).type).toBe('gauge');
      expect(value(g, {})).toBeGreaterThanOrEqual(0);
    }
    const starts = 'workbench_command_starts_total';
    expect(family(starts).type).toBe('counter');
    // The command above started one way or the other (the warm-up's own rehearsal may have started one too).
    expect(value(starts, { start: 'prepared' }) + value(starts, { start: 'cold' })).toBeGreaterThanOrEqual(1);
    expect(value('process_resident_memory_bytes', {})).toBeGreaterThan(1e6);
    expect(Number.isFinite(value('nodejs_eventloop_lag_max_seconds', {}))).toBe(true);
  });
});

describe('traceparent in params._meta', () => {
  it('a valid one is in the audit line of its call; a malformed one is not recorded', async () => {
    const valid = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    const bad = [
      '00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01', // uppercase
      '00-00000000000000000000000000000000-00f067aa0ba902b7-01', // all-zero trace id
      '00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01', // all-zero parent id
      'ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', // version ff
      '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"\n{"forged":1}',
    ];
    for (const [i, t] of [valid, ...bad].entries())
      await handshake(srv.url, 100 + i, 'tools/call', {
        name: 'read_file',
        arguments: { path: 'a.txt' },
        _meta: { traceparent: t },
      });
    const lines = readFileSync(auditFile, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { traceparent?: string });
    const last = lines.slice(-(bad.length + 1));
    expect(last[0]?.traceparent).toBe(valid);
    for (const l of last.slice(1)) expect(l.traceparent).toBeUndefined();
  });
});
