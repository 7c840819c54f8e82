// docs/design-notes.md#permission-grants and docs/tools.md#permission-modes: a `safe`-mode refusal the user
// may lift (a destructive command, network) is asked through a 2026-07-28 client that declared elicitation —
// `resultType: "input_required"` with one elicitation/create — and the retried call carrying the acceptance
// runs once, only that command. Replayed, declined, altered and expired answers are refused;
// request_permissions never grants and answers ELICITATION_UNSUPPORTED where the client cannot be asked. The
// official v2 client (pinned 2026-07-28, auto-fulfilment) is the peer for the full round trip; raw requests
// check each refusal.
import { existsSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client as ClientV2, StreamableHTTPClientTransport as HttpV2 } from '@modelcontextprotocol/client';
import { ManualClock } from '../../src/core/clock.js';
import { GRANT_TTL_MS } from '../../src/policy/grants.js';
import { bearer, ELICIT_META, META, request, send } from '../helpers/raw-http.js';
import { startInProcess, TEST_TOKEN, type InProcessServer } from '../helpers/server.js';
import { makeWorkspace, type TempWorkspace } from '../helpers/workspace.js';
import { needBwrap } from './exec-support.js';

/* eslint-disable @typescript-eslint/no-explicit-any */

let ws: TempWorkspace;
let server: InProcessServer;
const clock = new ManualClock(Date.now());

beforeAll(async () => {
  ws = makeWorkspace({ 'README.md': '# mrtr\n' });
  server = await startInProcess({ workspace: ws.dir, clock, env: { SERVICE_SANDBOX: 'off' } });
});
afterAll(async () => {
  await server?.close();
  ws?.cleanup();
});

/** tools/call exec_command in the 2026-07-28 era, with the elicitation capability and optional retry fields. */
async function exec(
  args: Record<string, unknown>,
  retry: Record<string, unknown> = {},
  meta: Record<string, unknown> = ELICIT_META,
) {
  const r = request('modern', 'tools/call', { name: 'exec_command', arguments: args, ...retry });
  (r.body.params as any)._meta = meta;
  const reply = await send(server.url, r, bearer());
  expect(reply.status).toBe(200);
  return reply.json.result;
}

const doomed = (name: string) => {
  ws.write(`${name}/x.txt`, 'x\n');
  return { cmd: `rm -rf ${name}`, yield_time_ms: 10_000 };
};

describe('exec_command refusals asked through the client (docs/design-notes.md#permission-grants)', () => {
  it('first call answers input_required with one elicitation; an accepting retry runs the command once', async () => {
    const args = doomed('build1');
    const first = await exec(args);
    expect(first.resultType).toBe('input_required');
    expect(Object.keys(first.inputRequests)).toEqual(['approve']);
    expect(first.inputRequests.approve.method).toBe('elicitation/create');
    expect(first.inputRequests.approve.params.message).toContain('rm -rf build1');
    expect(typeof first.requestState).toBe('string');
    expect(existsSync(path.join(ws.dir, 'build1'))).toBe(true);

    const retry = { requestState: first.requestState, inputResponses: { approve: { action: 'accept' } } };
    const ran = await exec(args, retry);
    expect(ran.resultType).toBe('complete');
    expect(ran.structuredContent).toMatchObject({ ok: true, status: 'exited', exit_code: 0 });
    expect(existsSync(path.join(ws.dir, 'build1'))).toBe(false);

    // Replay of the same accepted answer: refused, nothing runs again.
    ws.write('build1/again.txt', 'y\n');
    const replay = await exec(args, retry);
    expect(replay.structuredContent.error).toMatchObject({ code: 'PERMISSION_REQUIRED' });
    expect(replay.structuredContent.error.details.grant).toBe('stale');
    expect(existsSync(path.join(ws.dir, 'build1/again.txt'))).toBe(true);
  });

  it('a declined answer is refused and the command does not run', async () => {
    const args = doomed('build2');
    const first = await exec(args);
    const r = await exec(args, {
      requestState: first.requestState,
      inputResponses: { approve: { action: 'decline' } },
    });
    expect(r.structuredContent.error).toMatchObject({ code: 'PERMISSION_REQUIRED' });
    expect(r.structuredContent.error.details.grant).toBe('declined');
    expect(existsSync(path.join(ws.dir, 'build2/x.txt'))).toBe(true);
  });

  it('an approval for one command does not run another (arguments changed on the retry)', async () => {
    const args = doomed('build3');
    doomed('other3');
    const first = await exec(args);
    const r = await exec(
      { ...args, cmd: 'rm -rf other3' },
      { requestState: first.requestState, inputResponses: { approve: { action: 'accept' } } },
    );
    expect(r.structuredContent.error.details.grant).toBe('mismatch');
    expect(existsSync(path.join(ws.dir, 'other3/x.txt'))).toBe(true);
    expect(existsSync(path.join(ws.dir, 'build3/x.txt'))).toBe(true);
  });

  it(`an approval answered after ${GRANT_TTL_MS / 1000} s has expired (injected clock)`, async () => {
    const args = doomed('build4');
    const first = await exec(args);
    clock.advance(GRANT_TTL_MS + 1);
    const r = await exec(args, {
      requestState: first.requestState,
      inputResponses: { approve: { action: 'accept' } },
    });
    expect(r.structuredContent.error.details.grant).toBe('stale');
    expect(existsSync(path.join(ws.dir, 'build4/x.txt'))).toBe(true);
  });

  it('a 2026-07-28 client without the elicitation capability gets PERMISSION_REQUIRED, not a question', async () => {
    const r = await exec(doomed('build5'), {}, META);
    expect(r.resultType).toBe('complete');
    expect(r.structuredContent.error).toMatchObject({ code: 'PERMISSION_REQUIRED' });
  });

  it('a handshake-era client that declared elicitation gets PERMISSION_REQUIRED (no server-to-client channel)', async () => {
    const r = request('handshake', 'tools/call', { name: 'exec_command', arguments: doomed('build6') });
    const reply = await send(server.url, r, bearer());
    expect(reply.json.result.structuredContent.error).toMatchObject({ code: 'PERMISSION_REQUIRED' });
    expect(existsSync(path.join(ws.dir, 'build6/x.txt'))).toBe(true);
  });

  it('the official v2 client (2026-07-28, auto-fulfilment) asks its handler once and the command runs', async () => {
    const asked: string[] = [];
    const client = new ClientV2({ name: 'mrtr-test', version: '1.0.0' }, {
      versionNegotiation: { mode: { pin: '2026-07-28' } },
      capabilities: { elicitation: { form: {} } },
      inputRequired: { autoFulfill: true },
    } as any);
    (client as any).setRequestHandler('elicitation/create', async (req: any) => {
      asked.push(req.params.message);
      return { action: 'accept', content: {} };
    });
    await client.connect(
      new HttpV2(new URL(server.url), { authProvider: { token: async () => TEST_TOKEN } } as any),
    );
    try {
      const r: any = await client.callTool({ name: 'exec_command', arguments: doomed('build7') });
      expect(r.structuredContent).toMatchObject({ ok: true, status: 'exited', exit_code: 0 });
      expect(asked).toHaveLength(1);
      expect(asked[0]).toContain('rm -rf build7');
      expect(existsSync(path.join(ws.dir, 'build7'))).toBe(false);
    } finally {
      await client.close();
    }
  });
});

describe('request_permissions never grants (docs/design-notes.md#permission-grants, docs/tools.md#permission-modes)', () => {
  const ask = async (era: 'handshake' | 'modern', meta?: Record<string, unknown>) => {
    const r = request(era, 'tools/call', {
      name: 'request_permissions',
      arguments: { tool_name: 'exec_command', permission: 'network', reason: 'install dependencies' },
    });
    if (meta) (r.body.params as any)._meta = meta;
    return (await send(server.url, r, bearer())).json.result;
  };

  it('without a way to ask the user: ELICITATION_UNSUPPORTED naming --permission-mode trusted and a restart', async () => {
    for (const r of [await ask('handshake'), await ask('modern')]) {
      expect(r.isError).toBe(true);
      expect(r.structuredContent.error.code).toBe('ELICITATION_UNSUPPORTED');
      expect(r.structuredContent.error.message).toContain('--permission-mode trusted');
      expect(r.structuredContent.error.message).toContain('restarting');
    }
  });

  it('with elicitation declared: nothing granted, told to send the refused call itself', async () => {
    const r = await ask('modern', ELICIT_META);
    expect(r.isError).toBe(false);
    expect(r.structuredContent).toMatchObject({ ok: true, ask_on_call: true });
    expect(r.structuredContent.granted).not.toBe(true);
  });
});

describe.runIf(needBwrap('network grant in the bubblewrap sandbox'))(
  'a network grant in the sandbox (docs/design-notes.md#permission-grants: network in safe)',
  () => {
    let sws: TempWorkspace;
    let sserver: InProcessServer;
    let site: http.Server;
    let port = 0;
    beforeAll(async () => {
      sws = makeWorkspace({ 'README.md': '# net\n' });
      sserver = await startInProcess({ workspace: sws.dir, env: { SERVICE_SANDBOX: 'bwrap' } });
      site = http.createServer((_req, res) => res.end('hello-from-the-host-network'));
      await new Promise<void>((r) => site.listen(0, '127.0.0.1', () => r()));
      port = (site.address() as AddressInfo).port;
    });
    afterAll(async () => {
      await sserver?.close();
      site?.close();
      sws?.cleanup();
    });
    const curl = () => ({ cmd: `curl -s --max-time 20 http://127.0.0.1:${port}/`, yield_time_ms: 30_000 });
    const call = async (retry: Record<string, unknown> = {}, meta: Record<string, unknown> = ELICIT_META) => {
      const r = request('modern', 'tools/call', { name: 'exec_command', arguments: curl(), ...retry });
      (r.body.params as any)._meta = meta;
      return (await send(sserver.url, r, bearer())).json.result;
    };

    it('without a client that can ask, the kernel keeps the command off the host network', async () => {
      const r = await call({}, META);
      expect(r.structuredContent).toMatchObject({ ok: true, status: 'exited' });
      expect(r.structuredContent.stdout ?? '').not.toContain('hello-from-the-host-network');
    });

    // A grant is a rule of the filtering proxy for one command, never the host network
    // (docs/tools.md#network-in-safe-mode; test/net/net-safe.test.ts has the grant itself).
    it('a client that can ask is not asked beforehand (the proxy decides), and the host loopback stays out of reach', async () => {
      const first = await call();
      expect(first.resultType).toBe('complete');
      expect(first.structuredContent).toMatchObject({ ok: true, status: 'exited' });
      expect(first.structuredContent.stdout ?? '').not.toContain('hello-from-the-host-network');
    });
  },
);
