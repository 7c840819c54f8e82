// apply_patch and git/baseline together (the writer side of src/git/baseline): in a workspace that is not a
// git repository, what apply_patch changes over HTTP shows up in git_diff, and a dry run records nothing.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callTool } from '../helpers/rpc.js';
import { startInProcess, type InProcessServer } from '../helpers/server.js';
import { makeWorkspace, type TempWorkspace } from '../helpers/workspace.js';

let ws: TempWorkspace;
let srv: InProcessServer;

beforeAll(async () => {
  ws = makeWorkspace({ 'a.txt': 'one\ntwo\nthree\n', 'gone.txt': 'bye\n' });
  srv = await startInProcess({ workspace: ws.dir });
});
afterAll(async () => {
  await srv.close();
  ws.cleanup();
});

const patch = [
  '*** Begin Patch',
  '*** Update File: a.txt',
  ' one',
  '-two',
  '+TWO',
  '*** Add File: new/b.txt',
  '+born',
  '*** Delete File: gone.txt',
  '*** End Patch',
].join('\n');

describe('apply_patch reports its writes to git/baseline (docs/tools.md#git, outside a repository)', () => {
  it('a dry run records nothing', async () => {
    expect((await callTool(srv.url, 'apply_patch', { patch, dry_run: true })).isError).toBe(false);
    expect(srv.runtime.baseline.size).toBe(0);
  });

  it('git_diff shows the modified, added and deleted files after a real run', async () => {
    const r = await callTool(srv.url, 'apply_patch', { patch });
    expect(r.isError, r.content[0]?.text).toBe(false);
    expect(readFileSync(path.join(ws.dir, 'a.txt'), 'utf8')).toBe('one\nTWO\nthree\n');
    const d = await callTool(srv.url, 'git_diff', {});
    expect(d.isError, d.content[0]?.text).toBe(false);
    const text = d.content[0]?.text ?? '';
    expect(text).toContain('-two');
    expect(text).toContain('+TWO');
    expect(text).toContain('+born');
    expect(text).toContain('-bye');
    const kinds = Object.fromEntries(
      (d.structuredContent.files as Array<{ path: string; kind: string }>).map((f) => [f.path, f.kind]),
    );
    expect(kinds).toEqual({ 'a.txt': 'modified', 'gone.txt': 'deleted', 'new/b.txt': 'added' });
  });
});
