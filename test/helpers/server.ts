// Starting the real server for tests. `startServer` spawns the built bin (dist/cli/main.js) exactly as a user
// would and waits for the ready line; `startInProcess` builds the same Runtime + node:http server inside the
// test process (still real HTTP on 127.0.0.1) for tests that need many fast requests or an injected clock.
// The server's modules are imported by `startInProcess` when it is first called, not with this file: nearly every
// test file imports this one (for REPO_ROOT, TEST_TOKEN or startServer), and evaluating the whole of src/ costs
// each such file more than a second of CPU before its first test.
import { spawn, type ChildProcess } from 'node:child_process';
import type http from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Authenticator } from '../../src/auth/authenticate.js';
import type { Config } from '../../src/config/load.js';
import type { Clock } from '../../src/core/clock.js';
import type { Logger } from '../../src/core/log.js';
import { NODE_FLAGS } from '../../src/cli/heap-flags.js';
import { parseReadyLine } from '../../src/core/ready-line.js';
import type { ExtraRoute, HttpDeps } from '../../src/http/server.js';
import type { Runtime } from '../../src/runtime/runtime.js';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const BIN = path.join(REPO_ROOT, 'dist/cli/main.js');
/**
 * What tests put before the bin when they start it with `node` (process.execPath): the heap flags its shebang
 * gives, so the server runs in the one process the test started, as the bin runs it, instead of relaunching
 * itself with them (src/cli/heap-flags.ts; test/cli/heap-flags.test.ts starts it without them).
 */
export const BIN_NODE_FLAGS: readonly string[] = NODE_FLAGS;
export const TEST_TOKEN = 'test-token-0123456789abcdef';

export interface SpawnedServer {
  url: string;
  base: string;
  port: number;
  proc: ChildProcess;
  stderr: () => string;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Spawn `node dist/cli/main.js --port 0 …` and wait for `workbench-mcp listening on http://HOST:PORT/mcp`. */
export function startServer(opts: {
  workspace: string;
  env?: Record<string, string>;
  args?: string[];
  /** Only ends a hung start (default 60 s); a passing run never waits for it. */
  timeoutMs?: number;
  /** Another build of the bin (an installed package); default the checkout's dist/cli/main.js. */
  bin?: string;
  /** Node options before the bin, e.g. `--import test/helpers/loop-probe.mjs` (test/helpers/probed-server.ts). */
  nodeArgs?: string[];
  /** Sees the server's standard error from its first byte (a pause point may be reached before it is ready). */
  onStderr?: (chunk: Buffer) => void;
}): Promise<SpawnedServer> {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '/root',
    SERVICE_AUTH_TOKEN: TEST_TOKEN,
    // Nothing kept under the user's real home by tests (an OAuth server would keep its signing key there);
    // tests of kept credentials pass their own SERVICE_STATE_DIR.
    SERVICE_STATE_DIR: 'off',
    ...opts.env,
  };
  const proc = spawn(
    process.execPath,
    [
      ...BIN_NODE_FLAGS,
      ...(opts.nodeArgs ?? []),
      opts.bin ?? BIN,
      '--workspace',
      opts.workspace,
      '--port',
      '0',
      ...(opts.args ?? []),
    ],
    { env, stdio: ['pipe', 'pipe', 'pipe'] },
  );
  let err = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`server did not start: ${err}`));
    }, opts.timeoutMs ?? 60_000);
    if (opts.onStderr) proc.stderr.on('data', opts.onStderr);
    proc.stderr.on('data', (c: Buffer) => {
      err += c.toString();
      const ready = parseReadyLine(err);
      if (ready) {
        clearTimeout(timer);
        const { url, base, port } = ready;
        resolve({
          url,
          base,
          port,
          proc,
          stderr: () => err,
          stop: (signal = 'SIGTERM') =>
            new Promise((r) => {
              if (proc.exitCode !== null) return r(proc.exitCode);
              proc.once('exit', (code) => r(code));
              proc.kill(signal);
            }),
        });
      }
    });
    proc.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}: ${err}`));
    });
  });
}

export interface InProcessServer {
  url: string;
  base: string;
  runtime: Runtime;
  /** The node:http server (its connection table: connectionTableOf in src/http/server.ts). */
  server: http.Server;
  close(): Promise<void>;
}

/** The real HTTP stack inside the test process. `env` holds SERVICE_* settings as a user would set them. */
export async function startInProcess(opts: {
  workspace: string;
  env?: Record<string, string>;
  clock?: Clock;
  authenticator?: Authenticator;
  extraRoutes?: ExtraRoute[];
  limits?: HttpDeps['limits'];
  verbose?: boolean;
  /** Where the server logs (default: nowhere, or everything with `verbose`). */
  log?: Logger;
}): Promise<InProcessServer> {
  const [{ BearerAuthenticator, NoAuthAuthenticator }, { load }, { createLogger, silentLogger }] =
    await Promise.all([
      import('../../src/auth/authenticate.js'),
      import('../../src/config/load.js'),
      import('../../src/core/log.js'),
    ]);
  const [{ createHttpServer }, { Runtime }, { checkRoot }] = await Promise.all([
    import('../../src/http/server.js'),
    import('../../src/runtime/runtime.js'),
    import('../../src/workspace/paths.js'),
  ]);
  const env = { PATH: process.env.PATH ?? '', SERVICE_AUTH_TOKEN: TEST_TOKEN, ...opts.env };
  const action = load(['--workspace', opts.workspace], env, opts.workspace);
  if (action.kind !== 'serve') throw new Error('unexpected action');
  const config: Config = action.config;
  const rc = checkRoot(config.workspace, '/nonexistent-home');
  if (!rc.ok) throw new Error(rc.reason);
  const runtime = new Runtime({
    config,
    root: rc.root,
    log: opts.log ?? (opts.verbose ? createLogger('debug') : silentLogger),
    clock: opts.clock,
  });
  await runtime.start();
  const authenticator =
    opts.authenticator ??
    (config.authMode === 'noauth'
      ? new NoAuthAuthenticator(config.externalAuthProxy)
      : new BearerAuthenticator(config.authTokens));
  const server = createHttpServer({
    runtime,
    authenticator,
    extraRoutes: opts.extraRoutes,
    limits: opts.limits,
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    base: `http://127.0.0.1:${port}`,
    runtime,
    server,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      await runtime.shutdown();
    },
  };
}

/** A TCP port free on 127.0.0.1 a moment ago (for a program that must be told its port before it starts). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}
