// Shared pieces of the confinement attack tests: tool calls over HTTP with a ceiling that only ends
// a hung test, the symlink swapper (test/helpers/swapper.py) as a bounded child process and the undoing of the
// exchange it may leave behind, and a small valid PNG.
import { spawn } from 'node:child_process';
import { lstatSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { callTool } from './rpc.js';

/** Ends a hung test; never the thing a test passes on. */
export const CEILING_MS = 60_000;

export interface ToolAnswer {
  isError: boolean;
  /** error.code when isError, else undefined. */
  code: string | undefined;
  sc: any; // eslint-disable-line @typescript-eslint/no-explicit-any
  content: Array<{ type: string; text?: string; data?: string; mimeType?: string }>;
  /** The whole result as JSON: what the model would see, for leak checks. */
  raw: string;
}

export class Hung extends Error {}

/** tools/call that rejects with `Hung` when no answer comes within `ms`. */
export async function callWithin(
  url: string,
  name: string,
  args: Record<string, unknown>,
  ms = CEILING_MS,
): Promise<ToolAnswer> {
  let timer: NodeJS.Timeout | undefined;
  const ceiling = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Hung(`${name} ${JSON.stringify(args)} did not answer in ${ms} ms`)),
      ms,
    );
  });
  try {
    const r = await Promise.race([callTool(url, name, args), ceiling]);
    return {
      isError: r.isError,
      code: r.isError ? (r.structuredContent?.error?.code ?? 'NO_CODE') : undefined,
      sc: r.structuredContent,
      content: r.content,
      raw: JSON.stringify(r),
    };
  } finally {
    clearTimeout(timer);
  }
}

/** What a tool answered, in one word: `ok`, the error code, or `HUNG` (no answer before the ceiling). */
export async function outcome(url: string, name: string, args: Record<string, unknown>, ms = CEILING_MS) {
  try {
    const r = await callWithin(url, name, args, ms);
    return { word: r.isError ? (r.code as string) : 'ok', answer: r as ToolAnswer | undefined };
  } catch (e) {
    if (e instanceof Hung) return { word: 'HUNG', answer: undefined };
    throw e;
  }
}

/** The distinct `tool failed` lines (what became INTERNAL_ERROR) in a server's log, first `max` of them. */
export function toolFailures(stderr: string, max = 3): string[] {
  const seen = new Set<string>();
  for (const line of stderr.split('\n')) {
    if (!line.includes('tool failed')) continue;
    const short = line
      .replace(/\\n\s*at [^"]*/, '') // the stack
      .replace(/(?:[^/'"]{1,3}\/){16,}/g, '…/') // a very deep path
      .slice(0, 400);
    seen.add(short);
    if (seen.size >= max) break;
  }
  return [...seen];
}

const SWAPPER = path.join(path.dirname(fileURLToPath(import.meta.url)), 'swapper.py');

export interface Swapper {
  /** SIGTERM, then the number of exchanges it made (the paths are back as they were). */
  stop(): Promise<number>;
  /** SIGKILL if still running, resolving once it has exited (cleanup after a failed test). */
  kill(): Promise<void>;
}

/** Starts swapping `a` and `b` (bounded by `maxSeconds`); resolves once the first exchanges are done. */
export function startSwapper(a: string, b: string, maxSeconds: number): Promise<Swapper> {
  const proc = spawn('python3', [SWAPPER, a, b, String(maxSeconds)], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  proc.stderr.on('data', (c: Buffer) => (err += c.toString()));
  const exited = new Promise<number | null>((r) => proc.once('exit', (code) => r(code)));
  const swapper: Swapper = {
    async stop() {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
      const code = await exited;
      const m = /\{"swaps": (\d+)\}\s*$/.exec(out);
      if (code !== 0 || !m) throw new Error(`swapper failed (exit ${code}): ${out} ${err}`);
      return Number(m[1]);
    },
    async kill() {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
      await exited;
    },
  };
  return new Promise((resolve, reject) => {
    proc.stdout.on('data', (c: Buffer) => {
      out += c.toString();
      if (out.startsWith('ready\n')) resolve(swapper);
    });
    proc.once('error', (e) => reject(new Error(`the swap-race tests need python3 on PATH: ${e.message}`)));
    void exited.then((code) => reject(new Error(`swapper exited early (${code}): ${err}`)));
  });
}

/** An apply_patch body: the lines given, between the patch's begin and end lines. */
export const patch = (...body: string[]) => ['*** Begin Patch', ...body, '*** End Patch'].join('\n');

/** One call of a hostile-path table (test/confinement/confinement-errno.test.ts, confinement-fifo.test.ts). */
export interface ToolCase {
  title: string;
  tool: string;
  args: Record<string, unknown>;
  /** refuse: must be an error (a specific one, never INTERNAL_ERROR); answer: error or success; ok: must succeed. */
  expect: 'refuse' | 'answer' | 'ok';
  /** For a successful answer: a property of the result that shows the tool really worked. */
  check?: (sc: any) => boolean; // eslint-disable-line @typescript-eslint/no-explicit-any
}

/** Where the command attacks plant their canaries, outside any workspace: in /root, in a directory of /home, in /tmp. */
export function canaryFiles(prefix: string, tag: string): { root: string; home: string; tmp: string } {
  return {
    root: `/root/${prefix}-${tag}.txt`,
    home: `/home/${prefix}-${tag}/secret.txt`,
    tmp: `/tmp/${prefix}-${tag}.txt`,
  };
}

/** Writes `text` to each canary (mode 0644, the home one's directory 0755); each path made is pushed on `made`. */
export function plantCanaries(
  files: { home: string } & Record<string, string>,
  text: string,
  made: string[],
): void {
  mkdirSync(path.dirname(files.home), { mode: 0o755 });
  made.push(path.dirname(files.home));
  for (const f of Object.values(files)) {
    writeFileSync(f, `${text}\n`, { mode: 0o644 });
    made.push(f);
  }
}

/** A killed swapper may leave the pair exchanged: put the real directory back at `real` (and the link at `swap`). */
export function unswap(real: string, swap: string): void {
  if (!lstatSync(real).isSymbolicLink()) return;
  renameSync(real, `${real}.tmp`);
  renameSync(swap, real);
  renameSync(`${real}.tmp`, swap);
}

export { png } from './png.js';

/** Runs `attempt(i)` for i in [0, n) on `workers` concurrent lanes. */
export async function inLanes(n: number, workers: number, attempt: (i: number) => Promise<void>) {
  let next = 0;
  const lane = async () => {
    for (let i = next++; i < n; i = next++) await attempt(i);
  };
  await Promise.all(Array.from({ length: workers }, lane));
}
