// Waits that talk (docs/remote-access.md "When the URL does not answer"): while `workbench-mcp tunnel` waits
// for the provider to name its URL, and then for that URL to answer, it prints a line every 5 s saying what it
// waits for and what the last attempt met, in words; `--wait SECONDS` sets how long. Stand-in providers on PATH:
// an ngrok whose reserved name can never resolve (`.invalid`, RFC 6761), a cloudflared that never gets a name,
// and one that cannot reach api.trycloudflare.com (its error names that URL, which is no tunnel's address).
// The tests wait on the printed lines and the exit, never on a clock.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cloudflared } from '../../src/cli/tunnel/cloudflared.js';
import { exitCode, standinBin, startTunnel } from '../helpers/tunnel-run.js';
import { makeWorkspace, type TempWorkspace } from '../helpers/workspace.js';

let dir: string;
let bin: string;
let ws: TempWorkspace;

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'wb-tunnel-wait-'));
  bin = standinBin(dir);
  ws = makeWorkspace({ 'README.md': '# waiting\n' });
});
afterAll(() => {
  ws?.cleanup();
  rmSync(dir, { recursive: true, force: true });
});

/** A run's environment: its own HOME and state directory (`run`), as the runs go on side by side. */
const env = (run: string, extra: Record<string, string> = {}) => ({
  PATH: `${bin}:${process.env.PATH ?? '/usr/bin:/bin'}`,
  HOME: path.join(dir, run, 'home'),
  SERVICE_STATE_DIR: path.join(dir, run, 'state'),
  ...extra,
});

// Concurrent: each run mostly waits out its --wait (its own process, HOME and state directory), so the waits
// overlap instead of adding up.
describe.concurrent('tunnel: progress lines while it waits, --wait, and why it gave up', () => {
  it('a URL that never answers: a line every few seconds, then exit 6 naming the failure in words', async () => {
    const name = `wb${process.pid}.tunnel.invalid`;
    const t = startTunnel(
      ['ngrok', '--name', name, '--wait', '7', '--workspace', ws.dir, '--port', '0'],
      env('never-answers'),
    );
    try {
      const progress = await t.waitOut(
        new RegExp(
          `still waiting for https://${name.replace(/\./g, '\\.')} to answer \\(\\d+ s of 7 s\\): (.*)$`,
          'm',
        ),
        'err',
      );
      // Whatever this machine's resolver says (no such name, or no answer), it is said in words.
      expect(progress[1]).toMatch(
        /does not exist yet \(ENOTFOUND|cannot be resolved yet \(EAI_AGAIN|no answer yet/,
      );
      expect(await exitCode(t)).toBe(6);
      expect(t.err()).toMatch(
        new RegExp(
          `https://${name.replace(/\./g, '\\.')} did not answer within 7 s: .*; stopping\\. Try again, or allow longer with --wait SECONDS; a stable address`,
        ),
      );
      expect(t.out()).toBe(''); // no block for a URL that never answered
    } finally {
      t.proc.kill('SIGKILL');
    }
  });

  it('a provider that never names its URL: progress lines, then exit 5 with its last output', async () => {
    const t = startTunnel(
      ['cloudflared', '--wait', '6', '--workspace', ws.dir, '--port', '0'],
      env('never-named', { STANDIN_QUIET_URL: '1', STANDIN_NO_NAME: '1' }),
    );
    try {
      await t.waitOut(/still waiting for cloudflared to name its public URL \(\d+ s of 6 s\)/, 'err');
      expect(await exitCode(t)).toBe(5);
      expect(t.err()).toContain('cloudflared named no public URL within 6 s; its last output:');
      expect(t.err()).toContain('  | ');
    } finally {
      t.proc.kill('SIGKILL');
    }
  });

  it("cloudflared's error naming https://api.trycloudflare.com: exit 5 at once with its words, no wait for that URL", async () => {
    const t = startTunnel(
      ['cloudflared', '--wait', '600', '--workspace', ws.dir, '--port', '0'],
      env('offline', { STANDIN_OFFLINE: '1' }),
    );
    try {
      expect(await exitCode(t)).toBe(5);
      expect(t.err()).toContain(
        'workbench-mcp tunnel: cloudflared could not get a quick tunnel: failed to request quick Tunnel: Post "https://api.trycloudflare.com/tunnel"',
      );
      expect(t.err()).not.toContain('waiting until https://api.trycloudflare.com');
    } finally {
      t.proc.kill('SIGKILL');
    }
  });
});

describe("cloudflared's lines: only a quick tunnel's name is an address", () => {
  it('dash-joined words on trycloudflare.com; never api.trycloudflare.com', () => {
    const p = cloudflared({ port: 8765 });
    expect(p.fromLine('INF |  https://quiet-river-bright-field.trycloudflare.com   |')).toEqual({
      origin: 'https://quiet-river-bright-field.trycloudflare.com',
    });
    expect(p.fromLine('WRN retrying Post "https://api.trycloudflare.com/tunnel" in 2s')).toBeUndefined();
  });
});
