// The warm-up's rehearsal of the tools a coding loop calls first (src/cli/rehearsal.ts, docs/benchmarks.md):
// list_dir, read_file, search_text, git_status, git_diff and git_log on the workspace's smallest file, then
// apply_patch adding, changing and deleting a file in a scratch directory of the runtime directory, each once
// through tools/call's own path. It leaves no trace: no workspace file written or rewritten, no audit line,
// nothing in git_diff's changes since start (a workspace that is not a repository), no stray file for git, no
// scratch directory left; and it is left out once a client has called a tool.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { call, waitFor } from '../exec/exec-support.js';
import { startServer, type SpawnedServer } from '../helpers/server.js';
import { snapshotTree, treeChanges } from '../helpers/tree-snapshot.js';
import { git, makeWorkspace, type TempWorkspace } from '../helpers/workspace.js';

let ws: TempWorkspace | undefined;
let logs: TempWorkspace | undefined;
let server: SpawnedServer | undefined;
afterEach(async () => {
  await server?.stop();
  ws?.cleanup();
  logs?.cleanup();
  server = ws = logs = undefined;
});

const FILES = {
  'src/app.js': 'export const app = 1;\n',
  'a.txt': 'alpha beta\n',
  'big.md': '# big\n'.repeat(50),
};

/**
 * A server on `ws` whose debug log, audit log and runtime directory are kept; resolves once its tool rehearsal
 * has ended, checking that its scratch directory is gone.
 */
async function rehearsed(workspace: TempWorkspace): Promise<{ srv: SpawnedServer; audit: string }> {
  logs = makeWorkspace();
  const audit = path.join(logs.dir, 'audit.jsonl');
  const runtimeRoot = path.join(logs.dir, 'run');
  const srv = await startServer({
    workspace: workspace.dir,
    env: { SERVICE_LOG_LEVEL: 'debug', SERVICE_AUDIT_LOG: audit, SERVICE_RUNTIME_ROOT: runtimeRoot },
  });
  server = srv;
  const over = await waitFor(() => /tool rehearsal (done|left out)/.test(srv.stderr()));
  expect(over, srv.stderr()).toBe(true);
  expect(srv.stderr()).toMatch(/tool rehearsal done \{"reads":6,"written":3\}/);
  const instances = readdirSync(path.join(runtimeRoot, 'workbench-mcp'));
  expect(instances).toHaveLength(1);
  const own = readdirSync(path.join(runtimeRoot, 'workbench-mcp', instances[0] as string));
  expect(
    own.filter((n) => n.startsWith('rehearsal-')),
    own.join(' '),
  ).toEqual([]);
  return { srv, audit };
}

describe('the tool rehearsal after start', () => {
  it('in a repository: every tool rehearsed, no workspace file touched, no audit line, git sees nothing new', async () => {
    ws = makeWorkspace(FILES, { git: true });
    git(ws.dir, 'add', '-A');
    git(ws.dir, 'commit', '-q', '-m', 'first');
    // The test's own git status must not refresh the index either (a racily clean entry is rewritten).
    const status = () => git(ws!.dir, '--no-optional-locks', 'status', '--porcelain', '--ignored');
    const before = snapshotTree(ws.dir, { rewrites: true });
    const was = status();
    const { srv, audit } = await rehearsed(ws);
    // a.txt is the smallest file: its first line was read, searched for and patched back as it is (dry run).
    const changes = treeChanges(before, snapshotTree(ws.dir, { rewrites: true }));
    expect(changes, changes.join('\n')).toEqual([]);
    expect(status()).toBe(was);
    expect(existsSync(audit) ? readFileSync(audit, 'utf8') : '').toBe('');
    // A client's call after it is audited as usual: the audit log itself works here.
    const r = await call(srv.url, 'read_file', { path: 'a.txt' });
    expect(r.isError, r.text).toBe(false);
    expect(readFileSync(audit, 'utf8').trim().split('\n')).toHaveLength(1);
  });

  it('outside a repository: the writes in the scratch directory record nothing, so git_diff shows no change', async () => {
    ws = makeWorkspace(FILES);
    const before = snapshotTree(ws.dir, { rewrites: true });
    const { srv } = await rehearsed(ws);
    const changes = treeChanges(before, snapshotTree(ws.dir, { rewrites: true }));
    expect(changes, changes.join('\n')).toEqual([]);
    const d = await call(srv.url, 'git_diff', {});
    expect(d.isError, d.text).toBe(false);
    expect(d.sc.files ?? []).toEqual([]);
  });
});

describe('the tool rehearsal after a client called first (in process)', () => {
  it('is left out: the client call warmed its tool, and the rehearsal would only compete with the next', async () => {
    const [{ startInProcess }, { callTool }, { afterReady }] = await Promise.all([
      import('../helpers/server.js'),
      import('../helpers/rpc.js'),
      import('../../src/cli/warm-up.js'),
    ]);
    const lines: string[] = [];
    const keep = (msg: string) => void lines.push(msg);
    const log = { debug: keep, info: keep, warn: keep, error: keep };
    ws = makeWorkspace(FILES);
    const srv = await startInProcess({ workspace: ws.dir, log });
    try {
      const r = await callTool(srv.url, 'read_file', { path: 'a.txt' });
      expect(r.isError, JSON.stringify(r)).toBeFalsy();
      afterReady(srv.runtime, log);
      const over = await waitFor(() => lines.some((l) => /^tool rehearsal (done|left out)/.test(l)));
      expect(over, lines.join('\n')).toBe(true);
      expect(lines).toContain('tool rehearsal left out: a client called a tool first');
      expect(lines.some((l) => l.startsWith('tool rehearsal done'))).toBe(false);
    } finally {
      await srv.close();
    }
  });
});
