// README "Security model": file tools on what is not a regular file — a unix socket, character devices (made
// with mknod like /dev/null and /dev/zero; devices need root), a block device (like /dev/loop0), a FIFO. The
// review saw read_file and view_image answer INTERNAL_ERROR on a socket (ENXIO was not mapped) and on a device.
// Every call must answer at once with a specific error naming what the path is (never INTERNAL_ERROR, never a
// hang), and listings and searches of the directory that holds them must succeed. The ceilings only end a hung
// call (reported as the word HUNG).
import { execFileSync } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CEILING_MS, outcome } from '../helpers/confinement.js';
import { dirEntries } from '../helpers/list-dir.js';
import { startServer, type SpawnedServer } from '../helpers/server.js';
import { git, makeWorkspace, type TempWorkspace } from '../helpers/workspace.js';

const CI = process.env.CI === 'true' || process.env.CI === '1';
const ROOT = process.getuid?.() === 0;

/** The special files and what the error must call them. */
const KINDS: Array<{ name: string; what: RegExp; rootOnly?: boolean }> = [
  { name: 'sock', what: /unix socket/ },
  { name: 'fifo', what: /FIFO/ },
  { name: 'null', what: /character device/, rootOnly: true },
  { name: 'zero', what: /character device/, rootOnly: true },
  { name: 'loop', what: /block device/, rootOnly: true },
];

let ws: TempWorkspace;
let srv: SpawnedServer;
let sock: Server;
beforeAll(async () => {
  ws = makeWorkspace({ 'a.txt': 'needle\n' }, { git: true });
  git(ws.dir, 'add', 'a.txt');
  git(ws.dir, 'commit', '-q', '-m', 'init');
  sock = createServer();
  await new Promise<void>((r) => sock.listen(path.join(ws.dir, 'sock'), r));
  execFileSync('mkfifo', [path.join(ws.dir, 'fifo')]);
  if (ROOT) {
    execFileSync('mknod', [path.join(ws.dir, 'null'), 'c', '1', '3']);
    execFileSync('mknod', [path.join(ws.dir, 'zero'), 'c', '1', '5']);
    execFileSync('mknod', [path.join(ws.dir, 'loop'), 'b', '7', '0']);
  } else if (CI)
    throw new Error('CI=true: these tests need root to create device nodes; a skip would hide them');
  else
    process.stdout.write(
      '[special-files] not root: the character-device cases are skipped (mknod needs root)\n',
    );
  srv = await startServer({ workspace: ws.dir, timeoutMs: CEILING_MS });
});
afterAll(async () => {
  await srv?.stop('SIGKILL');
  await new Promise((r) => sock?.close(r));
  ws?.cleanup();
});

const TOOLS: Array<[string, (p: string) => Record<string, unknown>]> = [
  ['read_file', (p) => ({ path: p })],
  ['view_image', (p) => ({ path: p })],
  ['search_text', (p) => ({ query: 'needle', path: p })],
  ['git_blame', (p) => ({ path: p })],
];

describe('a special file named by a path is refused by name, at once', () => {
  for (const k of KINDS)
    for (const [tool, args] of TOOLS)
      it.skipIf(k.rootOnly && !ROOT)(`${tool} ${k.name}`, async () => {
        const { word, answer } = await outcome(srv.url, tool, args(k.name));
        const message = answer?.sc?.error?.message ?? JSON.stringify(answer?.sc);
        expect(['ok', 'HUNG', 'INTERNAL_ERROR'], `${word}: ${message}`).not.toContain(word);
        if (tool === 'git_blame') return; // git's own words (GIT_ERROR)
        expect(word, message).toBe('INVALID_ARGUMENT');
        expect(message).toMatch(k.what);
      });
});

describe('the directory that holds them lists and searches normally', () => {
  const names = KINDS.filter((k) => ROOT || !k.rootOnly).map((k) => k.name);
  it('list_dir shows them as "other"', async () => {
    const { word, answer } = await outcome(srv.url, 'list_dir', { path: '.' });
    expect(word).toBe('ok');
    const entries = dirEntries(answer?.sc);
    for (const n of names) expect(entries.find((e) => e.path === n)?.type, n).toBe('other');
  });
  it('list_files and search_text skip them', async () => {
    const files = await outcome(srv.url, 'list_files', {});
    expect(files.answer?.sc.files).toEqual([{ path: 'a.txt', size_bytes: 7 }]);
    const found = await outcome(srv.url, 'search_text', { query: 'needle' });
    expect(found.answer?.sc.matches).toEqual([{ path: 'a.txt', line: 1, column: 1, preview: 'needle' }]);
  });
});
