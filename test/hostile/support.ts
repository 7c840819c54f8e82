// Shared pieces of the hostile-input suite: a workspace with a sibling directory of canary
// files, tree snapshots that also catch rewrites (test/helpers/tree-snapshot.ts) to prove that nothing outside
// changed and nothing inside was half-written, the real HTTP stack started in this process with a logger that
// records every error the server logs (a logged "request failed" / "tool failed" is an internal error even
// when the client got an answer), the closed error families of the contract, and fast-check settings that
// keep runs bounded and reproducible (FC_SEED / FC_PATH replay a failure fast-check reported).
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type fc from 'fast-check';
import { expect } from 'vitest';
import { ALL_TOOL_ERROR_CODES } from '../../src/core/tool-error.js';
import type { Logger } from '../../src/core/log.js';
import type { Runtime } from '../../src/runtime/runtime.js';
import { git } from '../helpers/workspace.js';
import { startInProcess, TEST_TOKEN } from '../helpers/server.js';
import { raw, type RawReply } from '../helpers/raw-http.js';
import { snapshotTree, type Snapshot } from '../helpers/tree-snapshot.js';

/* eslint-disable @typescript-eslint/no-explicit-any */

/** The documented closed set of tool error codes, less INTERNAL_ERROR (docs/tools.md#results-and-errors). */
export const SPECIFIC_TOOL_CODES: ReadonlySet<string> = new Set(
  ALL_TOOL_ERROR_CODES.filter((c) => c !== 'INTERNAL_ERROR'),
);
/** JSON-RPC codes of docs/http.md#order-of-checks and docs/design-notes.md#statuses, docs/design-notes.md#stateless-era-order; -32603 is never acceptable. */
export const SPECIFIC_RPC: ReadonlyMap<number, readonly number[]> = new Map([
  [-32700, [400]],
  [-32600, [400, 403, 413, 415]],
  [-32601, [200, 404]],
  [-32602, [200, 400]],
  [-32020, [400]],
  [-32022, [400]],
]);

/**
 * Replay settings: FC_SEED=<seed> FC_PATH=<path> (with `-t <test title>`) re-run exactly the failing case
 * fast-check printed in its report ("seed: …, path: …").
 */
export function fcParams<T>(numRuns: number): fc.Parameters<T> {
  const seed = process.env.FC_SEED === undefined ? undefined : Number(process.env.FC_SEED);
  // HOSTILE_RUNS_FACTOR=<n> multiplies every property's runs, for a longer hunt than the default suite's.
  const factor = Number(process.env.HOSTILE_RUNS_FACTOR ?? 1) || 1;
  return {
    numRuns: Math.max(1, Math.round(numRuns * factor)),
    ...(seed === undefined ? {} : { seed }),
    ...(process.env.FC_PATH ? { path: process.env.FC_PATH } : {}),
    // The report names the seed and the path (fast-check's default); verbose adds the shrunk counterexample's steps.
    verbose: 1,
  };
}

export interface Layout {
  /** Parent of both: a temp directory. */
  parent: string;
  /** The served workspace (real path). */
  ws: string;
  /** The sibling directory whose files must never change. */
  canary: string;
  cleanup(): void;
}

/** Files of the served workspace: text, nested, binary, invalid UTF-8, an image, a git repository, symlinks. */
export const WORKSPACE_FILES: Record<string, string | Buffer> = {
  'README.md': '# demo\n\nA small project.\n',
  'AGENTS.md': 'Run the tests.\n',
  'src/main.ts': 'export function main() {\n  return 42;\n}\n',
  'src/util.ts': 'export const a = 1;\nexport const b = 2;\nexport const c = 3;\n',
  'src/deep/nested/file.txt': 'alpha\nbeta\ngamma\ndelta\n',
  'docs/guide.md': 'Guide\n=====\n\nStep one.\nStep two.\n',
  'crlf.txt': 'one\r\ntwo\r\nthree\r\n',
  'bom.txt': '\uFEFFwith a BOM\nsecond\n',
  'unicode-é.txt': 'héllo wörld — “quoted” ✓\n',
  'bin.dat': Buffer.from([0, 1, 2, 3, 0xff, 0xfe, 0, 0]),
  'latin1.txt': Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]),
  'empty.txt': '',
  '.hidden/secret.txt': 'hidden\n',
  'node_modules/pkg/index.js': 'module.exports = 1;\n',
  // 1x1 PNG
  'img.png': Buffer.from(
    '89504e470d0a1a0a0000000d4948445200000001000000010806000000' +
      '1f15c4890000000d49444154789c6360000002000100e221bc330000000049454e44ae426082',
    'hex',
  ),
};
export const CANARY_FILES: Record<string, string> = {
  'secret.txt': 'canary secret\n',
  'a.txt': 'canary a\n',
  'sub/b.txt': 'canary b\n',
};

export function makeLayout(opts: { git?: boolean } = {}): Layout {
  const parent = realpathSync(mkdtempSync(path.join(tmpdir(), 'wb-hostile-')));
  const ws = path.join(parent, 'ws');
  const canary = path.join(parent, 'canary');
  for (const [base, files] of [
    [ws, WORKSPACE_FILES],
    [canary, CANARY_FILES],
  ] as const) {
    for (const [rel, content] of Object.entries(files)) {
      const abs = path.join(base, rel);
      mkdirSync(path.dirname(abs), { recursive: true });
      writeFileSync(abs, content);
    }
  }
  // Symlinks: one inside, one to a canary file, one to the canary directory, one dangling outside.
  symlinkSync('src/main.ts', path.join(ws, 'link-inside.ts'));
  symlinkSync(path.join(canary, 'secret.txt'), path.join(ws, 'link-out.txt'));
  symlinkSync(canary, path.join(ws, 'link-out-dir'));
  symlinkSync(path.join(canary, 'not-there.txt'), path.join(ws, 'dangling.txt'));
  if (opts.git !== false) {
    git(ws, 'init', '-q', '-b', 'main');
    writeFileSync(path.join(ws, '.gitignore'), 'ignored.log\n');
    writeFileSync(path.join(ws, 'ignored.log'), 'ignored\n');
    git(ws, 'add', '-A');
    git(ws, 'commit', '-q', '-m', 'initial');
    writeFileSync(
      path.join(ws, 'src/util.ts'),
      'export const a = 1;\nexport const b = 20;\nexport const c = 3;\n',
    );
    writeFileSync(path.join(ws, 'untracked.txt'), 'new\n');
  }
  return { parent, ws, canary, cleanup: () => rmSync(parent, { recursive: true, force: true }) };
}

/** The hostile suite's snapshots also catch a file rewritten with the same bytes (tree-snapshot.ts). */
export function snapshot(dir: string): Snapshot {
  return snapshotTree(dir, { rewrites: true });
}

export interface HostileServer {
  url: string;
  base: string;
  port: number;
  runtime: Runtime;
  /** Every line the server logged at warn or error since start (or the last take). */
  takeErrors(): string[];
  close(): Promise<void>;
}

/** The real HTTP stack on 127.0.0.1 in this process (helpers/server startInProcess), logging captured. */
export async function startHostile(opts: {
  workspace: string;
  env?: Record<string, string>;
}): Promise<HostileServer> {
  const errors: string[] = [];
  const log: Logger = {
    debug() {},
    info() {},
    warn() {},
    error: (m, f) => errors.push(`${m} ${f ? JSON.stringify(f) : ''}`),
  };
  const srv = await startInProcess({ ...opts, log });
  return {
    url: srv.url,
    base: srv.base,
    port: Number(new URL(srv.base).port),
    runtime: srv.runtime,
    takeErrors: () => errors.splice(0),
    close: () => srv.close(),
  };
}

/** Headers of a well-formed handshake-era POST. */
export const GOOD_HEADERS: Record<string, string> = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  authorization: `Bearer ${TEST_TOKEN}`,
};

/** POST one body (string or raw bytes) with headers; a bounded wait (a hang fails the test). */
export function postRaw(
  url: string,
  body: string | Buffer,
  headers: Record<string, string | string[]> = GOOD_HEADERS,
): Promise<RawReply> {
  return raw(url, { headers, body, timeoutMs: 30_000 });
}

/** tools/call in the handshake era with arbitrary `arguments` (any JSON value, or omitted). */
export async function callRaw(url: string, name: string, args: unknown, id: number | string = 1) {
  const params: Record<string, unknown> = { name };
  if (args !== undefined) params.arguments = args;
  return postRaw(url, JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params }));
}

/** Outcomes per test (its title), printed by `printTallies` after a file: the suite's hostile-input counts. */
const tallies = new Map<string, Map<string, number>>();
export function tally(outcome: string): void {
  const name = expect.getState().currentTestName ?? '(outside a test)';
  const t = tallies.get(name) ?? new Map<string, number>();
  t.set(outcome, (t.get(outcome) ?? 0) + 1);
  tallies.set(name, t);
}
export function printTallies(): void {
  const lines = [...tallies].map(([name, t]) => {
    const total = [...t.values()].reduce((a, b) => a + b, 0);
    const parts = [...t].sort((a, b) => b[1] - a[1]).map(([k, n]) => `${k} ${n}`);
    return `[hostile] ${total} cases: ${name.split(' > ').pop()} — ${parts.join(', ')}`;
  });
  if (lines.length) console.log(lines.join('\n'));
}

/**
 * The verdict on one reply: a status with a well-formed body, never -32603 or a 5xx, never a session id. Returns
 * the JSON-RPC error code, the tool error code, or 'ok' (a result without isError), or 'accepted' (202).
 */
export function judge(
  r: RawReply,
  label: string,
):
  | { kind: 'rpc'; code: number }
  | { kind: 'tool'; code: string }
  | { kind: 'ok'; result: any }
  | { kind: 'accepted' } {
  const where = `${label}\n→ ${r.status} ${r.text.slice(0, 600)}`;
  tally(
    r.json?.error
      ? `${r.status}/${r.json.error.code}`
      : r.json?.result?.isError
        ? `${r.json.result.structuredContent?.error?.code}`
        : String(r.status),
  );
  expect(r.headers['mcp-session-id'], where).toBeUndefined();
  expect(r.status, where).toBeLessThan(500);
  if (r.status === 202) {
    expect(r.text, where).toBe('');
    return { kind: 'accepted' };
  }
  expect(r.json, where).toBeTypeOf('object');
  expect(r.json.jsonrpc, where).toBe('2.0');
  if (r.json.error !== undefined) {
    const code = r.json.error.code as number;
    expect(SPECIFIC_RPC.has(code), `${where}\nnot a specific JSON-RPC code`).toBe(true);
    expect(SPECIFIC_RPC.get(code), `${where}\nstatus does not fit the code`).toContain(r.status);
    expect(typeof r.json.error.message, where).toBe('string');
    return { kind: 'rpc', code };
  }
  expect(r.status, where).toBe(200);
  const result = r.json.result;
  expect(result, where).toBeTypeOf('object');
  if (result.isError === true) {
    const code = result.structuredContent?.error?.code as string;
    expect(SPECIFIC_TOOL_CODES.has(code), `${where}\nnot a specific tool error code`).toBe(true);
    expect(result.content?.[0]?.text, where).toMatch(new RegExp(`^${code}: `));
    return { kind: 'tool', code };
  }
  return { kind: 'ok', result };
}

/** A valid call after a batch: the server still serves, and answers correctly. */
export async function stillServing(url: string): Promise<void> {
  const r = await callRaw(url, 'read_file', { path: 'src/main.ts' });
  expect(r.status, r.text).toBe(200);
  expect(r.json.result?.isError, r.text).toBe(false);
  expect(r.json.result.structuredContent.content).toContain('return 42;');
}

export interface RawSocketReply {
  status: number;
  head: string;
  body: string;
}

/**
 * Send exact bytes on a fresh TCP connection and read the first response (status line, headers, and the body
 * by Content-Length) — for what node's client refuses to send (control characters, non-Latin-1 header
 * bytes). Rejects when the connection closes without a status line or nothing comes within `timeoutMs`.
 */
export function sendBytes(port: number, bytes: Buffer, timeoutMs = 30_000): Promise<RawSocketReply> {
  return new Promise((resolve, reject) => {
    let buf = Buffer.alloc(0);
    let done = false;
    const sock = net.connect(port, '127.0.0.1', () => sock.write(bytes));
    const finish = (f: () => void) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      sock.destroy();
      f();
    };
    const timer = setTimeout(
      () => finish(() => reject(new Error(`no response within ${timeoutMs} ms`))),
      timeoutMs,
    );
    const tryParse = (closed: boolean) => {
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) {
        if (closed)
          finish(() =>
            reject(
              new Error(
                `connection closed without a status: ${JSON.stringify(buf.toString('latin1').slice(0, 200))}`,
              ),
            ),
          );
        return;
      }
      const head = buf.subarray(0, end).toString('latin1');
      const m = /^HTTP\/1\.1 (\d{3})/.exec(head);
      if (!m) return finish(() => reject(new Error(`not an HTTP response: ${head.slice(0, 200)}`)));
      const cl = /\r\ncontent-length:\s*(\d+)/i.exec(head);
      const len = cl ? Number(cl[1]) : 0;
      if (buf.length >= end + 4 + len || closed)
        finish(() =>
          resolve({
            status: Number(m[1]),
            head,
            body: buf.subarray(end + 4, end + 4 + len).toString('utf8'),
          }),
        );
    };
    sock.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      tryParse(false);
    });
    sock.on('error', () => undefined);
    sock.on('close', () => tryParse(true));
  });
}

/** VmRSS and VmHWM (peak) of a process, in bytes, from /proc/<pid>/status. */
export function memoryOf(pid: number): { rss: number; hwm: number } {
  const s = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm').exec(s)?.[1] ?? NaN) * 1024;
  return { rss: kb('VmRSS'), hwm: kb('VmHWM') };
}

/** Pids of every descendant of `pid` (a spawned server's spawner helper, sandboxes, commands). */
export function descendantsOf(pid: number): number[] {
  const out: number[] = [];
  const todo = childrenOf(pid);
  while (todo.length) {
    const p = todo.pop() as number;
    out.push(p);
    todo.push(...childrenOf(p));
  }
  return out;
}

/** Pids of the direct children of `pid`. */
export function childrenOf(pid: number): number[] {
  try {
    const tasks = readdirSync(`/proc/${pid}/task`);
    const out = new Set<number>();
    for (const t of tasks) {
      const c = readFileSync(`/proc/${pid}/task/${t}/children`, 'utf8').trim();
      for (const x of c.split(/\s+/).filter(Boolean)) out.add(Number(x));
    }
    return [...out];
  } catch {
    return [];
  }
}
