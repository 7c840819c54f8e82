// The fixed cases of the hostile-input suite, beside the generated ones, each against the spawned bin
// (dist/cli/main.js) so the server's own memory can be read from /proc/<pid>/status:
// - a 100 MiB body refused without buffering (contract step 3: "413 without reading the rest"), with a declared
//   Content-Length and chunked; the client streams it slowly with backpressure and never holds it;
// - a command printing 1 GiB (docs/tools.md#commands: output budget, 64 KiB head + 448 KiB tail per stream):
//   the server's memory stays bounded, the results say how much was left out, and the server keeps serving;
// - a disk-full apply_patch on a small tmpfs (docs/design-notes.md#patch-failures,
//   docs/design-notes.md#tests): PATCH_FAILED with errno ENOSPC, the files exactly as before, no temp or
//   backup files, the server keeps serving (and writes again once space is back). Mounting needs root:
//   without it the case is skipped with the reason, except under CI=true.
// Fork storms and 10,000 idle connections are covered elsewhere.
import { execFileSync } from 'node:child_process';
import { mkdirSync, unlinkSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, TEST_TOKEN, type SpawnedServer } from '../helpers/server.js';
import { mountTmpfs, unmountTmpfs } from '../helpers/tmpfs.js';
import {
  callRaw,
  descendantsOf,
  judge,
  makeLayout,
  memoryOf,
  snapshot,
  stillServing,
  type Layout,
} from './support.js';
import { treeChanges } from '../helpers/tree-snapshot.js';

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;
const mib = (n: number) => `${(n / MiB).toFixed(1)} MiB`;

let L: Layout;
let srv: SpawnedServer;

beforeAll(async () => {
  L = makeLayout({ git: false });
  srv = await startServer({ workspace: L.ws });
});
afterAll(async () => {
  await srv?.stop('SIGKILL');
  L?.cleanup();
});

interface Upload {
  status: number | undefined;
  /** Bytes written by the client when the response arrived. */
  sentAtResponse: number;
  sent: number;
  peakRss: number;
}

/**
 * POST `total` bytes, generated as they are sent (one reused 64 KiB chunk, waiting for drain), and stop when
 * the server answers or closes. Samples the server's RSS while it runs.
 */
function upload(port: number, pid: number, total: number, declared: boolean, paced = true): Promise<Upload> {
  const chunk = Buffer.alloc(64 * 1024, 'x');
  return new Promise((resolve, reject) => {
    let sent = 0;
    let stop = false;
    let status: number | undefined;
    let sentAtResponse = -1;
    let peakRss = memoryOf(pid).rss;
    const sampler = setInterval(() => (peakRss = Math.max(peakRss, memoryOf(pid).rss)), 25);
    const timer = setTimeout(() => finish(new Error('no answer within 60 s')), 60_000);
    let done = false;
    const finish = (err?: Error) => {
      if (done) return;
      done = true;
      stop = true;
      clearInterval(sampler);
      clearTimeout(timer);
      req.destroy();
      if (err && status === undefined) reject(err);
      else resolve({ status, sentAtResponse, sent, peakRss });
    };
    const req = http.request({
      host: '127.0.0.1',
      port,
      method: 'POST',
      path: '/mcp',
      agent: false,
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${TEST_TOKEN}`,
        ...(declared ? { 'content-length': String(total) } : { 'transfer-encoding': 'chunked' }),
      },
    });
    req.on('response', (res) => {
      status = res.statusCode;
      sentAtResponse = sent;
      stop = true;
      res.resume();
      res.on('end', () => finish());
      res.on('error', () => finish());
    });
    req.on('error', (e) => setTimeout(() => finish(e), 200));
    req.on('close', () => setTimeout(() => finish(new Error('closed without a response')), 200));
    // Paced: one chunk, then a pause (or the drain), so the answer is read before the next write. Unpaced: as
    // fast as the socket takes it (the test below).
    const pump = () => {
      if (stop) return;
      if (sent >= total) return void req.end();
      const ok = req.write(chunk);
      sent += chunk.length;
      // Paced: setImmediate after the timer, so a poll phase (socket reads) always runs before the next write.
      if (!paced) {
        if (ok) setImmediate(pump);
        else req.once('drain', pump);
      } else if (ok) setTimeout(() => setImmediate(pump), 2);
      else req.once('drain', () => setTimeout(() => setImmediate(pump), 2));
    };
    req.on('socket', () => setImmediate(pump));
  });
}

describe('a 100 MiB body refused without buffering (contract step 3: 413 without reading the rest)', () => {
  for (const declared of [true, false]) {
    it(`${declared ? 'Content-Length: 100 MiB' : 'chunked, no length'} → 413 early, server RSS does not grow by ~100 MiB`, async () => {
      const pid = srv.proc.pid as number;
      await stillServing(srv.url);
      const before = memoryOf(pid);
      const up = await upload(srv.port, pid, 100 * MiB, declared);
      const after = memoryOf(pid);
      console.log(
        `[hostile] 100 MiB body (${declared ? 'declared' : 'chunked'}): ${up.status} after ${mib(up.sentAtResponse)} sent ` +
          `(${mib(up.sent)} in all); server RSS ${mib(before.rss)} → peak ${mib(up.peakRss)}, VmHWM ${mib(before.hwm)} → ${mib(after.hwm)}`,
      );
      expect(up.status).toBe(413);
      // Early: with a declared length before reading anything; chunked once past the 4 MiB limit (plus buffers).
      expect(up.sentAtResponse).toBeLessThan(declared ? 16 * MiB : 32 * MiB);
      expect(up.sent).toBeLessThan(64 * MiB);
      // Not buffered: the peak of the server's resident memory grew by far less than the body.
      expect(up.peakRss - before.rss).toBeLessThan(40 * MiB);
      expect(after.hwm - Math.max(before.hwm, before.rss)).toBeLessThan(40 * MiB);
      await stillServing(srv.url);
    });
  }
});

// A client that writes its body as fast as it can, without reading between writes, still gets the 413: the
// server closes only its own side after the answer and drops what still arrives (src/http/body.ts, lingering
// close per RFC 9112 §9.6). Before, node:http closed both sides at once and 9 of these 40 uploads saw EPIPE.
describe('the 413 reaches a client that writes as fast as it can (contract step 3)', () => {
  it('40 unpaced 100 MiB uploads, declared and chunked, all see 413; the server keeps serving', async () => {
    const pid = srv.proc.pid as number;
    const seen: Record<string, number> = {};
    for (const declared of [true, false])
      for (let i = 0; i < 20; i++) {
        const up = await upload(srv.port, pid, 100 * MiB, declared, false).catch(
          (e: NodeJS.ErrnoException) => ({ status: e.code }),
        );
        const k = `${declared ? 'declared' : 'chunked'} ${up.status}`;
        seen[k] = (seen[k] ?? 0) + 1;
      }
    expect(seen).toEqual({ 'declared 413': 20, 'chunked 413': 20 });
    await stillServing(srv.url);
  });
});

describe('a command printing 1 GiB (docs/tools.md#commands: bounded output)', () => {
  it('`yes | head -c 1G`: server memory bounded, results say how much was left out, the server keeps serving', async () => {
    const pid = srv.proc.pid as number;
    const before = memoryOf(pid);
    let peak = before.rss;
    let helperPeak = 0;
    const sample = () => {
      peak = Math.max(peak, memoryOf(pid).rss);
      let tree = 0;
      for (const c of descendantsOf(pid)) {
        try {
          tree += memoryOf(c).rss || 0; // a zombie has no VmRSS
        } catch {
          // a process that just ended
        }
      }
      helperPeak = Math.max(helperPeak, tree);
    };
    const sampler = setInterval(sample, 50);
    const t0 = Date.now();
    try {
      let r = await callRaw(srv.url, 'exec_command', {
        cmd: 'yes | head -c 1073741824',
        yield_time_ms: 300,
        max_output_bytes: 65_536,
      });
      let res = r.json.result;
      const id = res.structuredContent.command_id as string;
      let omitted = res.structuredContent.stdout_omitted_bytes ?? 0;
      let polls = 1;
      while (res.structuredContent.status === 'running') {
        expect(Date.now() - t0, 'the command did not finish in 5 minutes').toBeLessThan(300_000);
        r = await callRaw(srv.url, 'write_stdin', { command_id: id, chars: '', yield_time_ms: 1_000 });
        expect(judge(r, 'poll').kind).toBe('ok');
        res = r.json.result;
        omitted += res.structuredContent.stdout_omitted_bytes ?? 0;
        polls++;
        // The server answers other calls while the output streams in.
        await stillServing(srv.url);
      }
      sample();
      expect(res.structuredContent).toMatchObject({ status: 'exited', exit_code: 0 });
      // What was left out is said in the results, and read_output knows the exact total.
      expect(omitted).toBeGreaterThan(GiB - polls * 2 * 65_536);
      expect(res.content[0].text).toMatch(/left out|omitted|read_output/i);
      const ro = await callRaw(srv.url, 'read_output', {
        output_ref: `command:${id}:stdout`,
        offset: 512 * MiB,
        limit: 64,
      });
      const page = ro.json.result.structuredContent;
      expect(page.total_bytes).toBe(GiB);
      expect(page.skipped_bytes).toBeGreaterThan(0); // the middle was dropped; the offset moved to the tail
      console.log(
        `[hostile] 1 GiB of output in ${((Date.now() - t0) / 1000).toFixed(1)} s over ${polls} calls: ${mib(omitted)} reported left out; ` +
          `server RSS ${mib(before.rss)} → peak ${mib(peak)}; its descendants (spawner helper, the command) peak ${mib(helperPeak)} together`,
      );
      // Bounded: the retained output is at most 16 MiB in total; the rest is transient buffers.
      expect(peak - before.rss).toBeLessThan(160 * MiB);
      expect(helperPeak).toBeLessThan(400 * MiB);
    } finally {
      clearInterval(sampler);
    }
    await stillServing(srv.url);
  });
});

describe('a disk-full apply_patch on a 1 MiB tmpfs (docs/design-notes.md#patch-failures, docs/design-notes.md#tests)', () => {
  it('PATCH_FAILED with errno ENOSPC, files exactly as before, no temp files, the server keeps serving', async () => {
    const dir = path.join(L.parent, 'full');
    if (!mountTmpfs(dir, '1m', 'the disk-full apply_patch')) return;
    let full: SpawnedServer | undefined;
    try {
      const lines = (n: number, tag: string) =>
        Array.from({ length: n }, (_, i) => `${tag} line ${i} ${'.'.repeat(40)}`).join('\n') + '\n';
      writeFileSync(path.join(dir, 'small.txt'), 'one\ntwo\n');
      writeFileSync(path.join(dir, 'big.txt'), lines(6_000, 'big')); // ~340 KiB
      mkdirSync(path.join(dir, 'sub'));
      writeFileSync(path.join(dir, 'sub/keep.txt'), 'keep\n');
      // Fill the rest but ~150 KiB: a rewrite of big.txt (a new copy beside the original) cannot fit.
      const df = () =>
        Number(
          execFileSync('df', ['-B1', '--output=avail', dir], { encoding: 'utf8' }).trim().split('\n')[1],
        );
      writeFileSync(path.join(dir, 'fill.bin'), Buffer.alloc(Math.max(0, df() - 150 * 1024)));
      full = await startServer({ workspace: dir });
      const canary = snapshot(L.canary);
      const before = snapshot(dir);
      console.log(`[hostile] tmpfs: ${df()} bytes free before the patches`);

      const patches: Array<[string, string]> = [
        [
          'rewrite of a 340 KiB file',
          '*** Begin Patch\n*** Update File: big.txt\n-big line 10 ' +
            '.'.repeat(40) +
            '\n+BIG LINE 10\n*** End Patch\n',
        ],
        [
          'a small update that fits, then an add that does not (rolled back)',
          `*** Begin Patch\n*** Update File: small.txt\n-one\n+ONE\n*** Add File: sub/new/huge.txt\n${lines(5_000, '+huge')}*** End Patch\n`,
        ],
        [
          'a unified diff of the same rewrite',
          `--- a/big.txt\n+++ b/big.txt\n@@ -11,1 +11,1 @@\n-big line 10 ${'.'.repeat(40)}\n+BIG LINE 10\n`,
        ],
      ];
      for (const [what, patch] of patches) {
        const r = await callRaw(full.url, 'apply_patch', { patch });
        const v = judge(r, what);
        expect(v, `${what}: ${r.text.slice(0, 400)}`).toEqual({ kind: 'tool', code: 'PATCH_FAILED' });
        expect(r.json.result.structuredContent.error.details.errno, what).toBe('ENOSPC');
        expect(treeChanges(before, snapshot(dir)), `${what}: the tree changed`).toEqual([]);
        expect(treeChanges(canary, snapshot(L.canary)), `${what}: the canary changed`).toEqual([]);
        // Still serving: reads work on the full disk.
        const rf = await callRaw(full.url, 'read_file', { path: 'small.txt' });
        expect(rf.json.result.structuredContent.content).toBe('one\ntwo\n');
      }
      // Space back: the same patch now applies.
      unlinkSync(path.join(dir, 'fill.bin'));
      const ok = await callRaw(full.url, 'apply_patch', { patch: patches[0]?.[1] });
      expect(judge(ok, 'after freeing space').kind).toBe('ok');
    } finally {
      await full?.stop('SIGKILL');
      unmountTmpfs(dir);
    }
  });
});
