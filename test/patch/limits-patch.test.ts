// README "Limits": apply_patch cannot stall the server. The review sent a 4 MB, 10,000-hunk patch (dry run) that
// froze the event loop for 12 s while a concurrent server_info waited 11.7 s. Now a patch is at most
// MAX_PATCH_BYTES, refused beyond it with a message that names the limit and says to split it, and matching is
// incremental (each hunk looked for after the previous one) and yields to the event loop: a 10,000-hunk patch
// just under the limit keeps the longest event-loop delay under 250 ms (the review's ceiling) and the RSS under
// 300 MB, with server_info answered alongside.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_PATCH_BYTES } from '../../src/patch/engine.js';
import { PROBE_LIMITS, startProbedServer, type ProbedServer } from '../helpers/probed-server.js';
import { callTool } from '../helpers/rpc.js';
import { makeWorkspace, type TempWorkspace } from '../helpers/workspace.js';

const HUNKS = 10_000;

/** Block i of the file: a small function whose first lines name i, padded so the patch reaches the limit. */
function block(i: number, pad: string): string[] {
  const tail = pad ? ` // ${pad}` : '';
  return [`function f${i}() {${tail}`, `  let v = ${i};${tail}`, '  return v;', '}'];
}

/** A 10,000-hunk patch (one hunk per block, three context lines) as close under the limit as `pad` allows. */
function makeCase(): { file: string; patch: string } {
  const build = (pad: string) => {
    const file: string[] = [];
    const patch = ['*** Begin Patch', '*** Update File: big.js'];
    for (let i = 0; i < HUNKS; i++) {
      const [head, value, ret, close] = block(i, pad) as [string, string, string, string];
      file.push(head, value, ret, close, '');
      patch.push(
        '@@',
        ' ' + head,
        '-' + value,
        '+' + value.replace(`= ${i};`, `= ${i} + 1;`),
        ' ' + ret,
        ' ' + close,
      );
    }
    patch.push('*** End Patch');
    return { file: file.join('\n'), patch: patch.join('\n') };
  };
  const bare = build('');
  // Three padded lines per hunk, each padded with " // " and the padding.
  const perHunk = Math.floor((MAX_PATCH_BYTES - Buffer.byteLength(bare.patch) - 4096) / HUNKS / 3) - 4;
  const c = build('p'.repeat(Math.max(0, perHunk)));
  expect(Buffer.byteLength(c.patch)).toBeLessThanOrEqual(MAX_PATCH_BYTES);
  expect(Buffer.byteLength(c.patch)).toBeGreaterThan(MAX_PATCH_BYTES * 0.95);
  return c;
}

describe('apply_patch with 10,000 hunks', () => {
  let ws: TempWorkspace;
  let srv: ProbedServer;
  let patch: string;
  beforeAll(async () => {
    const c = makeCase();
    patch = c.patch;
    ws = makeWorkspace({ 'big.js': c.file });
    srv = await startProbedServer({ workspace: ws.dir });
    // Warm: the first call of each tool loads its modules; what is measured is the patch itself.
    await callTool(srv.url, 'server_info', {});
    await callTool(srv.url, 'apply_patch', {
      patch: '*** Begin Patch\n*** Add File: w.txt\n+w\n*** End Patch',
      dry_run: true,
    });
  });
  afterAll(async () => {
    await srv?.stop();
    ws.cleanup();
  });

  it('a dry run just under the limit matches every hunk without holding the event loop', async () => {
    await srv.sample();
    const answered: string[] = [];
    const applying = callTool(srv.url, 'apply_patch', { patch, dry_run: true }).then((r) => {
      answered.push('apply_patch');
      return r;
    });
    const info = callTool(srv.url, 'server_info', {}).then((r) => {
      answered.push('server_info');
      return r;
    });
    const [p, i] = await Promise.all([applying, info]);
    const s = await srv.sample();
    expect(i.isError).toBe(false);
    expect(p.isError, JSON.stringify(p.structuredContent).slice(0, 500)).toBe(false);
    expect(p.structuredContent).toMatchObject({ additions: HUNKS, removals: HUNKS, dry_run: true });
    expect(s.maxDelayMs, `longest event-loop delay (ms); answered: ${answered.join(', ')}`).toBeLessThan(
      PROBE_LIMITS.maxDelayMs,
    );
    expect(s.maxRssBytes, 'peak RSS (bytes)').toBeLessThan(PROBE_LIMITS.maxRssBytes);
  });

  it('a patch over the limit is refused, naming the limit and how to split it', async () => {
    const over = patch.replace(
      '*** End Patch',
      `+${'x'.repeat(MAX_PATCH_BYTES - Buffer.byteLength(patch))}\n*** End Patch`,
    );
    expect(Buffer.byteLength(over)).toBeGreaterThan(MAX_PATCH_BYTES);
    const r = await callTool(srv.url, 'apply_patch', { patch: over, dry_run: true });
    expect(r.structuredContent.error).toMatchObject({
      code: 'INVALID_ARGUMENT',
      details: { argument: 'patch', max_bytes: MAX_PATCH_BYTES },
    });
    expect(r.structuredContent.error.message).toContain(
      `at most ${MAX_PATCH_BYTES / 1024 / 1024} MiB (${MAX_PATCH_BYTES} bytes)`,
    );
    expect(r.content[0]?.text).toMatch(/Suggested action: Split the patch into several apply_patch calls/);
  });
});
