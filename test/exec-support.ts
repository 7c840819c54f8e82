// Shared pieces of the command tests: tool calls over HTTP (on the default pool or on a connection of one's
// own), counting live processes by a marker in their command line (/proc), bounded waits, and whether
// bubblewrap can run here (a skip prints the reason; under CI=true the skip fails instead).
import { spawnSync } from 'node:child_process';
import http from 'node:http';
import { readdirSync, readFileSync } from 'node:fs';
import { callTool, post } from './helpers/rpc.js';
import { TEST_TOKEN } from './helpers/server.js';

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

/** A notifications/cancelled for `requestId` (spec §6: it stops nothing). */
export function cancel(url: string, requestId: number) {
  return post(url, {
    jsonrpc: '2.0',
    method: 'notifications/cancelled',
    params: { requestId, reason: 'test' },
  });
}

/** Live `sleep` processes whose arguments contain `marker` (a unique duration), from /proc. */
export function processesWith(marker: string): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      const cmdline = readFileSync(`/proc/${name}/cmdline`, 'latin1').split('\0').join(' ');
      const state = readFileSync(`/proc/${name}/stat`, 'latin1');
      if (/^(?:\S*\/)?sleep /.test(cmdline) && cmdline.includes(marker) && !/\) Z /.test(state))
        out.push(Number(name));
    } catch {
      /* gone */
    }
  }
  return out;
}

export async function waitFor(
  pred: () => boolean | Promise<boolean>,
  ms: number,
  stepMs = 25,
): Promise<boolean> {
  const end = Date.now() + ms;
  for (;;) {
    if (await pred()) return true;
    if (Date.now() >= end) return false;
    await new Promise((r) => setTimeout(r, stepMs));
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

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
