// The moment a relay takes the proxy socket's path from the server's own listener (net-proxy-endpoints.ts,
// docs/security-model.md#network-per-mode), aimed with a pause point (docs/design-notes.md#pause-points): the
// server stops after the relay listens and before its socket is renamed onto the path; the test connects to
// the path then, so its connection waits in the server's listener's backlog while the relay takes the path
// over. It must be served (here: the 403 for a name not on the list), not reset by the listener closing under
// it.
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { call, needBwrap } from '../exec/exec-support.js';
import { needBuilt } from '../helpers/native.js';
import { pauseLineReader } from '../helpers/pause-lines.js';
import { proxyExchange } from '../helpers/raw-http.js';
import { startServer } from '../helpers/server.js';
import { makeWorkspace, type TempWorkspace } from '../helpers/workspace.js';

const POINT = 'proxy.relay-listening';

/** The proxy's socket below a runtime root (`<root>/…/net/proxy.sock`). */
function findProxySocket(dir: string, depth = 0): string | undefined {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.name === 'proxy.sock' && path.basename(dir) === 'net') return p;
    if (e.isDirectory() && depth < 6) {
      const found = findProxySocket(p, depth + 1);
      if (found) return found;
    }
  }
  return undefined;
}

describe('a relay taking the proxy socket over', () => {
  const runs =
    needBwrap('the relay takeover') && needBuilt(['wb-netrelay', 'wb-netbridge'], 'the relay takeover');
  let ws: TempWorkspace | undefined;
  const dir = mkdtempSync(path.join(tmpdir(), 'wb-takeover-'));
  afterAll(() => {
    ws?.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  it.skipIf(!runs)(
    "a connection waiting in the server's listener when the relay takes the path is served, not reset",
    async () => {
      ws = makeWorkspace({ 'README.md': '# takeover\n' });
      const runtime = path.join(dir, 'run');
      const resume = path.join(dir, 'resume');
      let answer: Promise<string> | undefined;
      let pauses = 0;
      const server = await startServer({
        workspace: ws.dir,
        env: {
          SERVICE_SANDBOX: 'bwrap',
          SERVICE_RUNTIME_ROOT: runtime,
          WB_TEST_PAUSE: POINT,
          WB_TEST_PAUSE_RESUME: resume,
        },
        onStderr: pauseLineReader((point) => {
          if (point !== POINT) return;
          pauses++;
          if (!answer) {
            const sock = findProxySocket(runtime);
            expect(sock, 'the proxy socket exists while the relay is staged').toBeDefined();
            // A reset rejects; kept as text, so the assertion below names it.
            answer = proxyExchange(sock as string, 'CONNECT elsewhere.test:443 HTTP/1.1\r\n\r\n').catch(
              (e: NodeJS.ErrnoException) => `[error: ${e.code ?? e.message}]`,
            );
          }
          writeFileSync(resume, '');
        }),
      });
      try {
        // The proxy opens with the first sandbox (at start, or with this command at the latest).
        const r = await call(server.url, 'exec_command', { cmd: 'true', yield_time_ms: 30_000 });
        expect(r.sc.exit_code).toBe(0);
        expect(pauses, `the server never reached ${POINT}`).toBeGreaterThan(0);
        const got = await answer;
        expect(got).toMatch(/^HTTP\/1\.1 403 /);
        expect(got).toContain('elsewhere.test is not on this server');
        // The relay has the path now: a second connection is its to answer, and gets the same refusal.
        const after = await proxyExchange(
          findProxySocket(runtime) as string,
          'CONNECT elsewhere.test:443 HTTP/1.1\r\n\r\n',
        );
        expect(after).toMatch(/^HTTP\/1\.1 403 /);
      } finally {
        await server.stop();
      }
    },
  );
});
