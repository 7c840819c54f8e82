// The event-loop watchdog (docs/tools.md#limits, docs/security-model.md): no call holds the server's event loop
// longer than 100 ms. One real server (dist/cli/main.js over HTTP on 127.0.0.1) gets the hostile-input matrix —
// generated envelopes, generated arguments for every tool, hostile paths, hostile patches, exhaustion bodies —
// and the three cases that held it for seconds: edit_file with a 3 MB old_string that matches nothing in a 4 MB
// file (once, and six in parallel), a first 10,000-hunk apply_patch, a 4 MB deeply nested (or merely
// value-heavy) JSON body. The server measures itself: test/helpers/loop-probe.mjs, loaded into it, keeps the
// longest lateness of a 10 ms timer and, beside it, perf_hooks.monitorEventLoopDelay's maximum.
//
// Why this cannot pass or fail by speed: the figure asserted is the timer's lateness counted only as far as the
// loop's own thread was on a CPU meanwhile (its utime + stime from /proc). A server starved by other work on the
// machine (CI's two shared cores, `yes > /dev/null` beside it) is late without using CPU, so it is not counted;
// a stretch of synchronous work is counted whether the machine is fast or slow, since a slow machine makes the
// same stretch longer only in proportion (each of the server's slices is ~20 ms: core/slice.ts). What is left of
// noise — a page fault storm, a GC pause — is taken out by repeating a group that went over and keeping its
// smallest maximum: a real block shows every time, a one-off does not. Today's code held the loop 0.3–4 s in
// these cases, every time.
import fc from 'fast-check';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { argumentsFromSchema, hostilePath, hostileString, type Json } from '../hostile/arbitraries.js';
import { callRaw, GOOD_HEADERS, judge, makeLayout, postRaw, type Layout } from '../hostile/support.js';
import { startProbedServer, type ProbedServer, type ProbeSample } from '../helpers/probed-server.js';
import { raw } from '../helpers/raw-http.js';

/* eslint-disable @typescript-eslint/no-explicit-any */

/** The limit: the longest the event loop may be held by one stretch of work. */
const MAX_HELD_MS = 100;
/** Runs of a group that went over before it counts as over (the smallest maximum is kept). */
const ATTEMPTS = 3;
const MiB = 1024 * 1024;

let L: Layout;
let srv: ProbedServer;
const rows: string[] = [];

/** 4 MB of distinct lines, none of which an old_string below contains. */
function bigSource(): string {
  const out: string[] = [];
  let size = 0;
  for (let i = 0; size < 4_000_000; i++) {
    const line = `const value${i} = compute(${i}, "alpha beta gamma ${i % 97}");`;
    out.push(line);
    size += line.length + 1;
  }
  return out.join('\n') + '\n';
}

/** 3 MB of lines like the file's but matching none of them. */
function missingOldString(): string {
  const out: string[] = [];
  let size = 0;
  for (let i = 0; size < 3_000_000; i++) {
    const line = `let other${i} = differ(${i * 7}, 'omega psi chi ${i % 89}');`;
    out.push(line);
    size += line.length + 1;
  }
  return out.join('\n');
}

/** A file of 10,000 small functions and a patch changing each (one hunk per function), about 0.9 MB. */
function tenThousandHunks(): { file: string; patch: string; broken: string } {
  const file: string[] = [];
  const patch = ['*** Begin Patch', '*** Update File: hunks.js'];
  for (let i = 0; i < 10_000; i++) {
    const head = `function f${i}() { // f${i}`;
    const value = `  let v = ${i}; // v${i}`;
    file.push(head, value, '  return v;', '}', '');
    patch.push('@@', ` ${head}`, `-${value}`, `+${value.replace(`= ${i};`, `= ${i} + 1;`)}`, '   return v;');
  }
  const broken = [...patch, '@@', ' function nowhere() {', '-  gone();', '+  here();', '*** End Patch'];
  patch.push('*** End Patch');
  return { file: file.join('\n'), patch: patch.join('\n'), broken: broken.join('\n') };
}

beforeAll(async () => {
  L = makeLayout();
  writeFileSync(path.join(L.ws, 'big.js'), bigSource());
  writeFileSync(path.join(L.ws, 'hunks.js'), tenThousandHunks().file);
  srv = await startProbedServer({ workspace: L.ws });
  // Past start-up (the sandbox is warmed then); the tools themselves stay cold for the first patch.
  expect((await callRaw(srv.url, 'server_info', {})).status).toBe(200);
}, 120_000);
afterAll(async () => {
  if (rows.length) console.log(`[watchdog] longest hold of the event loop per group:\n${rows.join('\n')}`);
  await srv?.stop();
  L?.cleanup();
});

/**
 * Runs `work` between two samples of the server's probe; repeats it (up to ATTEMPTS) while the hold is over the
 * limit and returns the smallest sample. `work` checks its own answers.
 */
async function held(label: string, work: () => Promise<void>): Promise<ProbeSample> {
  let best: ProbeSample | undefined;
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    await srv.sample();
    await work();
    const s = await srv.sample();
    if (!best || s.maxDelayMs < best.maxDelayMs) best = s;
    if (best.maxDelayMs <= MAX_HELD_MS) break;
  }
  const b = best as ProbeSample;
  rows.push(
    `  ${label}: ${b.maxDelayMs.toFixed(1)} ms (wall ${b.maxWallDelayMs.toFixed(1)} ms), peak RSS ${(b.maxRssBytes / MiB).toFixed(0)} MiB`,
  );
  return b;
}

function expectWithinLimit(s: ProbeSample, label: string): void {
  expect(s.maxDelayMs, `${label}: the longest hold of the server's event loop (ms)`).toBeLessThanOrEqual(
    MAX_HELD_MS,
  );
}

async function tool(name: string, args: unknown): Promise<any> {
  const r = await callRaw(srv.url, name, args);
  const v = judge(r, `${name} ${JSON.stringify(args)?.slice(0, 200)}`);
  return { r, v, result: r.json?.result };
}

describe('the three cases that held the loop for seconds', () => {
  it('a first 10,000-hunk apply_patch (dry run, then one whose last hunk is nowhere)', async () => {
    const { patch, broken } = tenThousandHunks();
    const s = await held('apply_patch, first 10,000 hunks', async () => {
      const { result } = await tool('apply_patch', { patch, dry_run: true });
      expect(result.isError, JSON.stringify(result).slice(0, 400)).toBe(false);
      expect(result.structuredContent).toMatchObject({ additions: 10_000, removals: 10_000 });
    });
    expectWithinLimit(s, 'apply_patch 10,000 hunks');
    const t = await held('apply_patch, 10,000 hunks, the last one missing', async () => {
      const { result } = await tool('apply_patch', { patch: broken, dry_run: true });
      expect(result.structuredContent.error.code).toBe('PATCH_CONTEXT_NOT_FOUND');
    });
    expectWithinLimit(t, 'apply_patch with a missing hunk');
  }, 180_000);

  it('a 4 MB deeply nested body, and 4 MB of small values side by side, authenticated', async () => {
    const depth = 1_900_000;
    const nested =
      '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"server_info","arguments":{"a":' +
      '['.repeat(depth) +
      ']'.repeat(depth) +
      '}}}';
    const flat =
      '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"server_info","arguments":{"a":[' +
      '[],'.repeat(1_300_000) +
      '[]]}}}';
    for (const [label, body] of [
      ['nested', nested],
      ['flat', flat],
    ] as const) {
      expect(Buffer.byteLength(body)).toBeLessThanOrEqual(4 * MiB);
      const s = await held(`4 MB ${label} body`, async () => {
        const r = await postRaw(srv.url, body, GOOD_HEADERS);
        expect({ status: r.status, code: r.json?.error?.code }, r.text.slice(0, 300)).toEqual({
          status: 400,
          code: -32600,
        });
      });
      expectWithinLimit(s, `4 MB ${label} body`);
    }
  }, 180_000);

  it('edit_file with a 3 MB old_string that matches nothing in a 4 MB file: once, then six in parallel', async () => {
    const old = missingOldString();
    const call = () => tool('edit_file', { path: 'big.js', old_string: old, new_string: 'x' });
    const one = await held('edit_file, 3 MB old_string', async () => {
      const { result } = await call();
      const e = result.structuredContent.error;
      expect(e.code).toBe('EDIT_NOT_FOUND');
      expect(e.message).toMatch(/the search compared only the first 65536 characters of old_string/);
      expect(e.details.search_cut).toContain('size');
    });
    expectWithinLimit(one, 'edit_file 3 MB');
    const before = await srv.sample();
    const six = await held('edit_file, 3 MB old_string, six in parallel', async () => {
      const all = await Promise.all(Array.from({ length: 6 }, call));
      for (const { result } of all) expect(result.structuredContent.error.code).toBe('EDIT_NOT_FOUND');
    });
    expectWithinLimit(six, 'six edit_file in parallel');
    // The searches run one at a time and compare 64 KiB each: the six cost little more than their bodies.
    const growth = six.maxRssBytes - before.maxRssBytes;
    expect(growth, `peak RSS growth of six parallel calls (${(growth / MiB).toFixed(0)} MiB)`).toBeLessThan(
      160 * MiB,
    );
  }, 240_000);

  it('a near miss in the 4 MB file is still found within the budget, without holding the loop', async () => {
    const line = 'const value31000 = compute(31000, "alpha beta gamma 57");';
    const s = await held('edit_file, near miss in 4 MB', async () => {
      const { result } = await tool('edit_file', {
        path: 'big.js',
        old_string: `  ${line}  `,
        new_string: 'x',
      });
      const e = result.structuredContent.error;
      expect(e.code).toBe('EDIT_NOT_FOUND');
      // Found, unless this machine is so slow that the search's time ran out first: then it says so.
      if (e.details.search_cut) expect(e.message).toMatch(/the search was cut after \d+ ms/);
      else expect(e.details).toMatchObject({ near_miss: 'whitespace', line: 31001 });
    });
    expectWithinLimit(s, 'near miss');
  }, 120_000);
});

describe('the hostile-input matrix', () => {
  const SEED = 20261129;
  const sample = <T>(arb: fc.Arbitrary<T>, n: number): T[] => fc.sample(arb, { numRuns: n, seed: SEED });

  it('envelopes: any JSON value as the body, junk in every position, raw bytes', async () => {
    const junk = fc.jsonValue({ maxDepth: 6 });
    const bodies = [
      ...sample(junk, 60).map((v) => JSON.stringify(v)),
      ...sample(junk, 40).map((v) =>
        JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: v }),
      ),
      ...sample(junk, 40).map((v) => JSON.stringify({ jsonrpc: '2.0', id: v, method: 'ping' })),
      ...sample(hostileString, 40).map((m) => JSON.stringify({ jsonrpc: '2.0', id: 1, method: m })),
      ...sample(fc.uint8Array({ maxLength: 200 }), 20).map((b) => Buffer.from(b).toString('latin1')),
    ];
    const s = await held('envelopes', async () => {
      for (const body of bodies) judge(await postRaw(srv.url, body, GOOD_HEADERS), body.slice(0, 200));
    });
    expectWithinLimit(s, 'envelopes');
  }, 240_000);

  it('tools: generated arguments for every tool (no generated command is ever run)', async () => {
    const list = await postRaw(srv.url, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }));
    const tools = list.json.result.tools as Array<{ name: string; inputSchema: Json }>;
    const ctx = { ws: L.ws, canary: L.canary };
    const calls: Array<[string, Json]> = [];
    for (const t of tools) {
      if (['exec_command', 'write_stdin', 'request_permissions'].includes(t.name)) continue;
      for (const args of sample(argumentsFromSchema(t.inputSchema, ctx), 12)) calls.push([t.name, args]);
    }
    const s = await held('tool arguments', async () => {
      for (const [name, args] of calls) await tool(name, args);
    });
    expectWithinLimit(s, 'tool arguments');
  }, 300_000);

  it('paths: hostile paths to every tool that takes one', async () => {
    const paths = sample(hostilePath(L.ws, L.canary), 40);
    const s = await held('hostile paths', async () => {
      for (const p of paths) {
        await tool('read_file', { path: p });
        await tool('list_dir', { path: p });
        await tool('search_text', { path: p, query: 'main' });
        await tool('edit_file', { path: p, old_string: 'text that is in no file', new_string: 'x' });
        await tool('git_log', { path: p });
      }
    });
    expectWithinLimit(s, 'paths');
  }, 300_000);

  it('patches: a huge hunk, a parse error at the end of a 1 MB patch, many files, ambiguous context', async () => {
    const lines = Array.from({ length: 40_000 }, (_, i) => `+added line ${i}`);
    const huge = ['*** Begin Patch', '*** Update File: src/main.ts', '@@', ...lines, '*** End Patch'].join(
      '\n',
    );
    const parseError = huge.replace('*** End Patch', '*** Bogus Marker');
    const manyFiles = [
      '*** Begin Patch',
      ...Array.from({ length: 3000 }, (_, i) => `*** Add File: many/f${i}.txt\n+${i}`),
      '*** End Patch',
    ].join('\n');
    const ambiguous = [
      '*** Begin Patch',
      '*** Update File: hunks.js',
      '@@',
      '   return v;',
      '-}',
      '+};',
      '*** End Patch',
    ].join('\n');
    for (const [label, patch] of Object.entries({ huge, parseError, manyFiles, ambiguous })) {
      const s = await held(`patch: ${label}`, async () => {
        await tool('apply_patch', { patch, dry_run: true });
      });
      expectWithinLimit(s, `patch: ${label}`);
    }
  }, 240_000);

  it('exhaustion: bodies over the size limit, declared and chunked, are refused without holding the loop', async () => {
    const s = await held('bodies over the limit', async () => {
      const declared = await postRaw(srv.url, Buffer.alloc(8 * MiB, 'x'), GOOD_HEADERS);
      expect(declared.status).toBe(413);
      const chunks = Array.from({ length: 80 }, () => Buffer.alloc(64 * 1024, 'x'));
      const chunked = await raw(srv.url, { headers: GOOD_HEADERS, chunks, timeoutMs: 30_000 });
      expect(chunked.status).toBe(413);
    });
    expectWithinLimit(s, 'bodies over the limit');
  }, 120_000);
});
