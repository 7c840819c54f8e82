// The soak: 16 mixed clients (reads, searches, patches, commands run, abandoned and killed, PTYs,
// cancelled requests, handshake sessions and stateless calls, a stdio server beside the HTTP one) for 30 s under
// CI (20 s elsewhere), then everything idle: RSS, heap, descriptors, processes, runtime directory and command
// registry back within tolerance of the idle baseline, zero errors, every patch line present exactly once. The
// soak itself is bench/soak.mjs (`npm run soak -- --minutes N` for a long one); this runs it on the built bin.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect, it } from 'vitest';

const SECONDS = process.env.CI === 'true' ? 30 : 20;

it(`soak: 16 mixed clients for ${SECONDS} s leave no growth, no error and every patch exactly once`, async () => {
  const out = mkdtempSync(path.join(tmpdir(), 'wb-soak-results-'));
  try {
    const child = spawn(process.execPath, ['bench/soak.mjs', '--seconds', String(SECONDS), '--out', 'soak'], {
      env: { ...process.env, WB_BENCH_RESULTS: out },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let log = '';
    child.stdout.on('data', (c) => (log += c));
    child.stderr.on('data', (c) => (log += c));
    const code = await new Promise<number | null>((r) => child.on('exit', r));
    const result = JSON.parse(readFileSync(path.join(out, 'soak.json'), 'utf8'));
    const failed = result.targets.filter((t: { pass: boolean }) => !t.pass);
    expect(failed, log).toEqual([]);
    expect(result.warmup_errors).toEqual([]);
    expect(code, log).toBe(0);
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}, 600_000);
