// README "Editing files" (edit_file goes through apply_patch's engine): a directory swapped for a symlink between
// staging and rename, and a file changed by another writer in that window, are refused with nothing written
// outside and the file as the other writer left it (the committer's hook acts at an exact step, so nothing
// here depends on timing); concurrent edits of one file from many clients all apply (per-file lock); git_diff
// outside a repository shows the edit; the audit log has its line; tools/list lists it after apply_patch.
import { readdirSync, readFileSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ToolError } from '../../src/core/tool-error.js';
import type { StepInfo } from '../../src/patch/commit.js';
import { editFile, type EditRequest } from '../../src/patch/edit.js';
import { FileLocks } from '../../src/patch/locks.js';
import { checkRoot } from '../../src/workspace/paths.js';
import { callTool, handshake } from '../helpers/rpc.js';
import { startInProcess, type InProcessServer } from '../helpers/server.js';
import { makeWorkspace, type TempWorkspace } from '../helpers/workspace.js';

const N = 16;
let ws: TempWorkspace;
let logDir: TempWorkspace;
let srv: InProcessServer;

beforeAll(async () => {
  const lines = Array.from({ length: N * 3 }, (_, i) => (i % 3 === 0 ? `item ${i / 3}` : `filler ${i}`));
  ws = makeWorkspace({ 'shared.txt': lines.join('\n') + '\n', 'plain.txt': 'one\ntwo\n' });
  logDir = makeWorkspace();
  srv = await startInProcess({
    workspace: ws.dir,
    env: { SERVICE_AUDIT_LOG: path.join(logDir.dir, 'audit.jsonl') },
  });
});
afterAll(async () => {
  await srv.close();
  ws.cleanup();
  logDir.cleanup();
});

interface Run {
  dir: string;
  out: string;
  error: unknown;
}

/**
 * edit_file's engine on a fresh workspace (`files`) beside an outside directory holding f.txt; `atStep` runs in
 * the committer just before the rename, with both directories.
 */
async function engineRun(
  files: Record<string, string>,
  req: Omit<EditRequest, 'replaceAll'>,
  atStep: (dir: string, out: string, step: StepInfo) => void,
  check: (r: Run) => void,
): Promise<void> {
  const local = makeWorkspace(files);
  const out = makeWorkspace({ 'f.txt': 'same\n' });
  try {
    const rc = checkRoot(local.dir, '/nonexistent-home');
    if (!rc.ok) throw new Error(rc.reason);
    let error: unknown;
    try {
      await editFile(
        { root: rc.root, locks: new FileLocks() },
        { ...req, replaceAll: false },
        { hooks: { beforeStep: (s) => atStep(local.dir, out.dir, s) } },
      );
    } catch (e) {
      error = e;
    }
    check({ dir: local.dir, out: out.dir, error });
  } finally {
    local.cleanup();
    out.cleanup();
  }
}

const codeOf = (e: unknown) => (e instanceof ToolError ? e.code : String(e));

describe('races at the commit, at an exact step (README "Editing files", "Security model")', () => {
  const swap = (dir: string, out: string) => {
    renameSync(path.join(dir, 'd'), path.join(dir, 'd.moved'));
    symlinkSync(out, path.join(dir, 'd'));
  };
  it('an edit: its directory swapped for a symlink to outside before the rename is SYMLINK_ESCAPE; nothing lands outside', async () => {
    const files = { 'd/f.txt': 'same\n' };
    await engineRun(
      files,
      { path: 'd/f.txt', oldString: 'same', newString: 'changed' },
      swap,
      ({ dir, out, error }) => {
        expect(codeOf(error)).toBe('SYMLINK_ESCAPE');
        expect(readdirSync(out)).toEqual(['f.txt']);
        expect(readFileSync(path.join(out, 'f.txt'), 'utf8')).toBe('same\n');
        // The real directory, moved aside by the swap, holds exactly what it held: no temp or backup file left.
        expect(readdirSync(path.join(dir, 'd.moved'))).toEqual(['f.txt']);
        expect(readFileSync(path.join(dir, 'd.moved/f.txt'), 'utf8')).toBe('same\n');
      },
    );
  });

  it('a new file: its directory swapped for a symlink to outside before the rename; the file lands in the real directory, never outside', async () => {
    // The committer names the file through the directory's descriptor, opened before the swap: the new file
    // follows the real directory to where the swap moved it (README "Security model": file tools are confined).
    const files = { 'd/keep.txt': 'keep\n' };
    await engineRun(
      files,
      { path: 'd/f.txt', oldString: '', newString: 'pwned\n' },
      swap,
      ({ dir, out, error }) => {
        expect(error).toBeUndefined();
        expect(readdirSync(out)).toEqual(['f.txt']);
        expect(readFileSync(path.join(out, 'f.txt'), 'utf8')).toBe('same\n');
        expect(readdirSync(path.join(dir, 'd.moved')).sort()).toEqual(['f.txt', 'keep.txt']);
        expect(readFileSync(path.join(dir, 'd.moved/f.txt'), 'utf8')).toBe('pwned\n');
      },
    );
  });

  it('a file rewritten by another writer after the match is PATCH_CONFLICT naming edit_file; that write stays', async () => {
    await engineRun(
      { 'f.txt': 'same\n' },
      { path: 'f.txt', oldString: 'same', newString: 'mine' },
      (dir) => writeFileSync(path.join(dir, 'f.txt'), 'theirs\n'),
      ({ dir, error }) => {
        expect(codeOf(error)).toBe('PATCH_CONFLICT');
        expect((error as ToolError).retryable).toBe(true);
        expect((error as ToolError).hints.suggestion).toMatch(/^Send the same edit_file call again/);
        expect(readFileSync(path.join(dir, 'f.txt'), 'utf8')).toBe('theirs\n');
        expect(readdirSync(dir)).toEqual(['f.txt']);
      },
    );
  });

  it('a file created by another writer before a new file is renamed in is PATCH_CONFLICT; theirs stays', async () => {
    await engineRun(
      { 'keep.txt': 'keep\n' },
      { path: 'f.txt', oldString: '', newString: 'mine\n' },
      (dir) => writeFileSync(path.join(dir, 'f.txt'), 'theirs\n'),
      ({ dir, error }) => {
        expect(codeOf(error)).toBe('PATCH_CONFLICT');
        expect(readFileSync(path.join(dir, 'f.txt'), 'utf8')).toBe('theirs\n');
        expect(readdirSync(dir).sort()).toEqual(['f.txt', 'keep.txt']);
      },
    );
  });
});

describe('bounds: what one call may build (README "Editing files")', () => {
  it('more than 100,000 places, or a result over the 64 MiB limit, is PATCH_FAILED too_large; nothing written', async () => {
    ws.write('many.txt', 'a\n'.repeat(100_001));
    ws.write('few.txt', 'x\n'.repeat(1000));
    const many = await callTool(srv.url, 'edit_file', {
      path: 'many.txt',
      old_string: 'a',
      new_string: 'b',
      replace_all: true,
    });
    expect(many.structuredContent.error).toMatchObject({
      code: 'PATCH_FAILED',
      details: { reason: 'too_large' },
    });
    const big = await callTool(srv.url, 'edit_file', {
      path: 'few.txt',
      old_string: 'x',
      new_string: 'y'.repeat(70 * 1024),
      replace_all: true,
    });
    expect(big.structuredContent.error).toMatchObject({
      code: 'PATCH_FAILED',
      details: { reason: 'too_large' },
    });
    const ambiguous = await callTool(srv.url, 'edit_file', {
      path: 'many.txt',
      old_string: 'a',
      new_string: 'b',
    });
    expect(ambiguous.content[0]?.text).toMatch(/occurs more than 100000 times \(lines 1, 2, .*, 20, …\)/);
    expect(ambiguous.structuredContent.error.details.match_lines).toHaveLength(20);
    expect(readFileSync(path.join(ws.dir, 'many.txt'), 'utf8')).toBe('a\n'.repeat(100_001));
    expect(readFileSync(path.join(ws.dir, 'few.txt'), 'utf8')).toBe('x\n'.repeat(1000));
  });
});

describe('edit_file over HTTP (README "Editing files")', () => {
  it(`${N} clients editing different lines of one file at once all apply (per-file lock)`, async () => {
    const results = await Promise.all(
      Array.from({ length: N }, (_, i) =>
        callTool(srv.url, 'edit_file', {
          path: 'shared.txt',
          old_string: `item ${i}\n`,
          new_string: `ITEM ${i}\n`,
        }),
      ),
    );
    expect(results.filter((r) => r.isError).map((r) => r.content[0]?.text)).toEqual([]);
    const text = readFileSync(path.join(ws.dir, 'shared.txt'), 'utf8');
    for (let i = 0; i < N; i++) expect(text).toContain(`\nITEM ${i}\n`.slice(i === 0 ? 1 : 0));
    expect(text).not.toMatch(/item \d/);
    expect(srv.runtime.patchLocks.size).toBe(0);
  });

  it('git_diff outside a repository shows what edit_file changed; the audit log has one line per call', async () => {
    const r = await callTool(srv.url, 'edit_file', {
      path: 'plain.txt',
      old_string: 'two',
      new_string: 'TWO',
    });
    expect(r.isError, r.content[0]?.text).toBe(false);
    const d = await callTool(srv.url, 'git_diff', {});
    expect(d.content[0]?.text).toContain('-two\n+TWO');
    const lines = readFileSync(path.join(logDir.dir, 'audit.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(
      lines.find((l) => l.tool === 'edit_file' && (l.arguments as { path: string }).path === 'plain.txt'),
    ).toMatchObject({ ok: true, arguments: { old_string: 'two', new_string: 'TWO' } });
    const bad = await callTool(srv.url, 'edit_file', {
      path: 'plain.txt',
      old_string: 'nope',
      new_string: 'x',
    });
    expect(bad.structuredContent.error.code).toBe('EDIT_NOT_FOUND');
    const last = readFileSync(path.join(logDir.dir, 'audit.jsonl'), 'utf8').trim().split('\n').pop()!;
    expect(JSON.parse(last)).toMatchObject({ tool: 'edit_file', ok: false, error: 'EDIT_NOT_FOUND' });
  });

  it('is listed after apply_patch: not read-only, not destructive, closed world; wrong arguments are INVALID_ARGUMENT', async () => {
    const r = await handshake(srv.url, 1, 'tools/list');
    const tools = r.json.result.tools as Array<Record<string, any>>; // eslint-disable-line @typescript-eslint/no-explicit-any
    const names = tools.map((t) => t.name);
    expect(names.indexOf('edit_file')).toBe(names.indexOf('apply_patch') + 1);
    const t = tools.find((x) => x.name === 'edit_file')!;
    // Every hint stated, false ones included (docs/tools.md#annotations); idempotentHint only where true.
    expect(t.annotations).toEqual({ readOnlyHint: false, destructiveHint: false, openWorldHint: false });
    expect(srv.runtime.catalog.realAnnotations.get('edit_file')).toEqual({
      readOnlyHint: false,
      destructiveHint: false,
      idempotentHint: false,
      openWorldHint: false,
    });
    expect(t.inputSchema).toMatchObject({
      type: 'object',
      additionalProperties: false,
      required: ['path', 'old_string', 'new_string'],
    });
    expect(Object.keys(t.inputSchema.properties).sort()).toEqual([
      'new_string',
      'old_string',
      'path',
      'replace_all',
    ]);
    const bad = await callTool(srv.url, 'edit_file', { path: 'plain.txt', old_string: 'one', new_string: 1 });
    expect(bad.structuredContent.error.code).toBe('INVALID_ARGUMENT');
    const info = await callTool(srv.url, 'server_info', {});
    expect(info.structuredContent.tools).toContain('edit_file');
  });
});
