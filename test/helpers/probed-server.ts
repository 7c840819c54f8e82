// "The server stayed responsive and bounded": the built server started as a user would (startServer) with the
// test-only probe test/helpers/loop-probe.mjs loaded through `node --import`. `sample()` asks the probe (SIGUSR2)
// for the maxima since the previous sample — event-loop delay, peak RSS, open descriptors — and waits for its
// answer file; so a test samples once before a call (to start a clean measurement) and once after it.
//
//   const srv = await startProbedServer({ workspace });
//   await srv.sample();                       // start measuring from here
//   await callTool(srv.url, 'list_files', {});
//   const s = await srv.sample();             // maxima during the call
//   expect(s.maxDelayMs).toBeLessThan(PROBE_LIMITS.maxDelayMs);
//   await srv.stop();
import { mkdtempSync, readdirSync, readFileSync, rmSync, watch } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { REPO_ROOT, startServer, type SpawnedServer } from './server.js';

export const PROBE_PATH = path.join(REPO_ROOT, 'test/helpers/loop-probe.mjs');

/** The ceilings the review asks every hostile-size call to stay under. */
export const PROBE_LIMITS = { maxDelayMs: 250, maxRssBytes: 300 * 1024 * 1024 } as const;

export interface ProbeSample {
  /**
   * Longest time the event loop was held by work, in milliseconds: a 10 ms tick's lateness, counted as far as the
   * loop's thread used CPU meanwhile (test/helpers/loop-probe.mjs), so a load on the machine does not count.
   */
  maxDelayMs: number;
  /** The same on the wall clock (perf_hooks.monitorEventLoopDelay's maximum): includes waiting for a CPU. */
  maxWallDelayMs: number;
  /** Peak resident set size of the server process, in bytes. */
  maxRssBytes: number;
  /** Most descriptors the server process had open at once (sampled every 20 ms; Linux only, else 0). */
  maxFds: number;
}

export interface ProbedServer extends SpawnedServer {
  pid: number;
  /** Maxima since the previous sample (or the start), then a new measurement starts. */
  sample(): Promise<ProbeSample>;
}

/** Only ends a hung probe; a working one answers within milliseconds. */
const SAMPLE_CEILING_MS = 30_000;

export async function startProbedServer(opts: Parameters<typeof startServer>[0]): Promise<ProbedServer> {
  const dir = mkdtempSync(path.join(tmpdir(), 'wb-probe-'));
  const out = path.join(dir, 'sample.json');
  const srv = await startServer({
    ...opts,
    env: { ...opts.env, WB_LOOP_PROBE_OUT: out },
    nodeArgs: [...(opts.nodeArgs ?? []), '--import', PROBE_PATH],
  });
  let seq = 0;
  const sample = async (): Promise<ProbeSample> => {
    const want = ++seq;
    const answered = waitForSeq(dir, out, want);
    srv.proc.kill('SIGUSR2');
    const r = await answered;
    return {
      maxDelayMs: r.maxDelayMs,
      maxWallDelayMs: r.maxWallDelayMs,
      maxRssBytes: r.maxRssBytes,
      maxFds: r.maxFds,
    };
  };
  const stop = async (signal?: NodeJS.Signals) => {
    try {
      return await srv.stop(signal);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
  return { ...srv, pid: srv.proc.pid as number, sample, stop };
}

function readSeq(out: string): (ProbeSample & { seq: number }) | undefined {
  try {
    return JSON.parse(readFileSync(out, 'utf8')) as ProbeSample & { seq: number };
  } catch {
    return undefined; // not written yet
  }
}

/** Resolves with the probe's report number `want`, woken by the rename that publishes it. */
function waitForSeq(dir: string, out: string, want: number): Promise<ProbeSample & { seq: number }> {
  return new Promise((resolve, reject) => {
    const done = (r: ProbeSample & { seq: number }) => {
      watcher.close();
      clearTimeout(timer);
      resolve(r);
    };
    const check = () => {
      const r = readSeq(out);
      if (r && r.seq >= want) done(r);
    };
    const watcher = watch(dir, check);
    const timer = setTimeout(() => {
      watcher.close();
      reject(new Error(`the loop probe did not answer sample ${want} (is the server alive?)`));
    }, SAMPLE_CEILING_MS);
    check();
  });
}

/** Descriptors the process `pid` has open right now (Linux /proc; 0 elsewhere). */
export function openFdCount(pid: number): number {
  try {
    return readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return 0;
  }
}
