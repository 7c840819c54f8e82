// Shared pieces of the command tests: tool calls over HTTP (on the default pool or on a connection of one's
// own), counting the live processes this test started by a marker in their command line (/proc), waits on
// events whose ceilings only end a hung test, and whether bubblewrap can run here (a skip prints the reason;
// under CI=true the skip fails instead).
import { spawnSync } from 'node:child_process';
import { randomInt } from 'node:crypto';
import http from 'node:http';
import { readdirSync, readFileSync } from 'node:fs';
import { callTool, post } from '../helpers/rpc.js';
import { TEST_TOKEN } from '../helpers/server.js';

/* eslint-disable @typescript-eslint/no-explicit-any */
export interface Result {
  sc: any;
  text: string;
  isError: boolean;
}

export async function call(url: string, name: string, args: Record<string, unknown> = {}): Promise<Result> {
  const r = await callTool(url, name, args);
  return { sc: r.structuredContent, text: r.content[0]?.text ?? '', isError: r.isError };
}

/** tools/call on a given keep-alive agent (its own TCP connection), handshake era. */
export function callOn(
  agent: http.Agent,
  url: string,
  name: string,
  args: Record<string, unknown>,
  id = 1,
): Promise<Result> {
  return new Promise((resolve, reject) => {
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name, arguments: args },
    });
    const req = http.request(
      url,
      {
        method: 'POST',
        agent,
        headers: {
          'content-type': 'application/json',
          authorization: `Bearer ${TEST_TOKEN}`,
          'content-length': Buffer.byteLength(body),
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => {
          try {
            const r = JSON.parse(text).result;
            resolve({ sc: r.structuredContent, text: r.content[0]?.text ?? '', isError: r.isError });
          } catch (e) {
            reject(new Error(`bad response ${res.statusCode}: ${text} (${String(e)})`));
          }
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** A notifications/cancelled for `requestId` (docs/design-notes.md#notifications: it stops nothing). */
export function cancel(url: string, requestId: number) {
  return post(url, {
    jsonrpc: '2.0',
    method: 'notifications/cancelled',
    params: { requestId, reason: 'test' },
  });
}

/** Only ends a hung test: every wait on an event gets at least this long (a passing run never waits it out). */
export const HUNG_MS = 60_000;

const issued = new Set<string>();

/**
 * A `sleep` duration no other test run shares (1000–2000 s with nine random decimals): `sleep ${m}` marks the
 * processes of one test, and outlives any test that waits for them to end.
 */
export function uniqueMarker(): string {
  const m = `${1000 + randomInt(1000)}.${String(randomInt(1e9)).padStart(9, '0')}`;
  issued.add(m);
  return m;
}

/**
 * Live (not zombie) `sleep` processes whose arguments contain `marker`, from /proc. A marker from
 * uniqueMarker() belongs to this run alone, so every process carrying it counts — also one orphaned to init,
 * which is what the "no orphans" tests must see. Any other marker counts only among descendants of this test
 * process (the servers it launched, and inside bubblewrap too: /proc shows host parent ids), never another
 * run's processes on the same machine.
 */
export function processesWith(marker: string): number[] {
  const parent = new Map<number, number>();
  const matches: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'latin1');
      const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      parent.set(Number(name), Number(ppid));
      if (state === 'Z') continue;
      const cmdline = readFileSync(`/proc/${name}/cmdline`, 'latin1').split('\0').join(' ');
      if (/^(?:\S*\/)?sleep /.test(cmdline) && cmdline.includes(marker)) matches.push(Number(name));
    } catch {
      /* gone */
    }
  }
  if (issued.has(marker)) return matches;
  return matches.filter((pid) => descendsFrom(pid, process.pid, parent));
}

function descendsFrom(pid: number, ancestor: number, parent: ReadonlyMap<number, number>): boolean {
  for (let cur = parent.get(pid), hops = 0; cur !== undefined && cur > 1 && hops < 4096; hops++) {
    if (cur === ancestor) return true;
    cur = parent.get(cur);
  }
  return false;
}

/**
 * Polls `pred` until it holds. The ceiling only ends a hung test, so it is never below HUNG_MS: a shorter
 * `ms` is raised to it (a passing run returns as soon as the event happened).
 */
export async function waitFor(
  pred: () => boolean | Promise<boolean>,
  ms = HUNG_MS,
  stepMs = 25,
): Promise<boolean> {
  const end = Date.now() + Math.max(ms, HUNG_MS);
  for (;;) {
    if (await pred()) return true;
    if (Date.now() >= end) return false;
    await new Promise((r) => setTimeout(r, stepMs));
  }
}

/**
 * Polls a command (write_stdin, which answers on new output or exit) after first typing `chars`, until its
 * collected stdout matches `until` or it has ended. The deadline only ends a hung test.
 */
export async function pollUntil(
  url: string,
  id: string,
  until: RegExp | null,
  chars = '',
  /** Output the caller already has (e.g. exec_command's own result): counted, and enough if it matches. */
  already = '',
): Promise<{ last: Result; stdout: string }> {
  const end = Date.now() + HUNG_MS;
  if (!chars && until && until.test(already)) {
    const last = await call(url, 'write_stdin', { command_id: id, chars: '', yield_time_ms: 0 });
    return { last, stdout: already + (last.sc.stdout ?? '') };
  }
  let last = await call(url, 'write_stdin', { command_id: id, chars, yield_time_ms: 10_000 });
  let stdout = already + (last.sc.stdout ?? '');
  while (last.sc.status === 'running' && !(until && until.test(stdout)) && Date.now() < end) {
    last = await call(url, 'write_stdin', { command_id: id, chars: '', yield_time_ms: 10_000 });
    stdout += last.sc.stdout ?? '';
  }
  return { last, stdout };
}

/**
 * Follows a command exec_command started (with yield_time_ms 0) through write_stdin until it has ended: all
 * its stdout and stderr, from exec_command's own answer on.
 */
export async function followToEnd(url: string, started: Result): Promise<{ out: string; err: string }> {
  let r = started.sc;
  let out = r.stdout ?? '';
  let err = r.stderr ?? '';
  while (r.status === 'running') {
    const args = { command_id: started.sc.command_id, chars: '', yield_time_ms: 10_000 };
    r = (await call(url, 'write_stdin', args)).sc;
    out += r.stdout ?? '';
    err += r.stderr ?? '';
  }
  return { out, err };
}

/**
 * A bounded fork storm in Python: up to 2000 children that sleep 120 s (`mark` in their command line), then
 * "fork failed <errno>" at the first refused fork and "forked <n>"; the parent lingers `lingerS` seconds.
 */
export function forkStormPy(mark: string, lingerS?: number): string {
  return (
    `import os, time\nn = 0\ntry:\n  for i in range(2000):\n    if os.fork() == 0:\n      time.sleep(120); os._exit(0)  # ${mark}\n` +
    '    n += 1\nexcept OSError as e:\n  print("fork failed", e.errno)\nprint("forked", n, flush=True)' +
    (lingerS === undefined ? '' : `\ntime.sleep(${lingerS})`)
  );
}

let bwrapState: { ok: boolean; reason: string } | undefined;

/** Whether bubblewrap can create a sandbox here. */
export function bwrapUsable(): { ok: boolean; reason: string } {
  if (bwrapState) return bwrapState;
  const r = spawnSync(
    'bwrap',
    ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--unshare-pid', '--unshare-net', 'true'],
    { encoding: 'utf8' },
  );
  bwrapState = r.error
    ? { ok: false, reason: 'bwrap (bubblewrap) is not installed' }
    : r.status === 0
      ? { ok: true, reason: '' }
      : { ok: false, reason: `bwrap cannot create a sandbox here: ${(r.stderr || '').trim()}` };
  return bwrapState;
}

/**
 * For tests that need bubblewrap: true when usable. Otherwise prints why and returns false (the caller
 * skips) — except under CI=true, where CI installs bubblewrap and a skip would hide a regression: it throws.
 */
export function needBwrap(what: string): boolean {
  const s = bwrapUsable();
  if (s.ok) return true;
  if (process.env.CI === 'true') throw new Error(`${what} needs bubblewrap under CI=true, but ${s.reason}`);
  console.log(`SKIP ${what}: ${s.reason}`);
  return false;
}
