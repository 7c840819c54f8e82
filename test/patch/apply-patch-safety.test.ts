// docs/tools.md#paths and docs/tools.md#editing-files (writes never go through a symlink and never leave the
// workspace; docs/design-notes.md#symlink-races), dry_run, and the tool's advertised shape
// (docs/tools.md#results-and-errors): over real HTTP, plus the engine with a hook that swaps a directory for
// a symlink between staging and rename.
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ToolError } from '../../src/core/tool-error.js';
import { applyPatch } from '../../src/patch/engine.js';
import { FileLocks } from '../../src/patch/locks.js';
import { checkRoot } from '../../src/workspace/paths.js';
import { callTool, handshake } from '../helpers/rpc.js';
import { startInProcess, type InProcessServer } from '../helpers/server.js';
import { makeWorkspace, type TempWorkspace } from '../helpers/workspace.js';

let ws: TempWorkspace;
let outside: TempWorkspace;
let srv: InProcessServer;

beforeAll(async () => {
  outside = makeWorkspace({ 'secret.txt': 'secret\n' });
  ws = makeWorkspace({ 'real.txt': 'real\n', 'dir/inner.txt': 'inner\n' });
  symlinkSync(path.join(ws.dir, 'real.txt'), path.join(ws.dir, 'link-inside.txt'));
  symlinkSync(path.join(outside.dir, 'secret.txt'), path.join(ws.dir, 'link-outside.txt'));
  symlinkSync(outside.dir, path.join(ws.dir, 'outdir'));
  symlinkSync(path.join(outside.dir, 'not-yet.txt'), path.join(ws.dir, 'dangling.txt'));
  srv = await startInProcess({ workspace: ws.dir });
});
afterAll(async () => {
  await srv.close();
  ws.cleanup();
  outside.cleanup();
});

const patch = (...body: string[]) => ['*** Begin Patch', ...body, '*** End Patch'].join('\n');
const apply = (p: string, extra: Record<string, unknown> = {}) =>
  callTool(srv.url, 'apply_patch', { patch: p, ...extra });
const outsideUntouched = () => {
  expect(readdirSync(outside.dir).sort()).toEqual(['secret.txt']);
  expect(readFileSync(path.join(outside.dir, 'secret.txt'), 'utf8')).toBe('secret\n');
};

describe('symlinks and escapes (docs/tools.md#paths, docs/design-notes.md#symlink-races)', () => {
  it('a symlink inside the workspace is never written through', async () => {
    const r = await apply(patch('*** Update File: link-inside.txt', '-real', '+through the link'));
    expect(r.structuredContent.error).toMatchObject({
      code: 'PATCH_FAILED',
      details: { reason: 'symlink', path: 'link-inside.txt', line: 2 },
    });
    expect(readFileSync(path.join(ws.dir, 'real.txt'), 'utf8')).toBe('real\n');
    const d = await apply(patch('*** Delete File: link-inside.txt'));
    expect(d.structuredContent.error.code).toBe('PATCH_FAILED');
    expect(existsSync(path.join(ws.dir, 'link-inside.txt'))).toBe(true);
  });

  it('a symlink leading outside is SYMLINK_ESCAPE, for updates, adds into linked directories and moves', async () => {
    const cases = [
      patch('*** Update File: link-outside.txt', '-secret', '+pwned'),
      patch('*** Add File: outdir/new.txt', '+pwned'),
      patch('*** Update File: real.txt', '*** Move to: outdir/real.txt'),
    ];
    for (const p of cases) {
      const r = await apply(p);
      expect(r.structuredContent.error?.code, p).toBe('SYMLINK_ESCAPE');
      expect(r.content[0]?.text).toMatch(/^SYMLINK_ESCAPE: patch line \d+: /);
    }
    // A dangling link is an existing entry: adding a file there is refused, and the link is not followed.
    const d = await apply(patch('*** Add File: dangling.txt', '+pwned'));
    expect(d.structuredContent.error).toMatchObject({ code: 'PATCH_FAILED', details: { reason: 'exists' } });
    outsideUntouched();
    expect(readFileSync(path.join(ws.dir, 'real.txt'), 'utf8')).toBe('real\n');
  });

  it('relative and absolute paths outside the root are PATH_OUTSIDE_WORKSPACE', async () => {
    for (const p of [
      patch('*** Add File: ../escape.txt', '+x'),
      patch('*** Update File: real.txt', '*** Move to: ../../moved.txt'),
      patch(`*** Update File: ${path.join(outside.dir, 'secret.txt')}`, '-secret', '+x'),
      patch('*** Delete File: dir/../../x'),
    ]) {
      const r = await apply(p);
      expect(r.structuredContent.error?.code, p).toBe('PATH_OUTSIDE_WORKSPACE');
    }
    outsideUntouched();
  });

  it('an absolute path inside the workspace is accepted', async () => {
    const r = await apply(
      patch(`*** Update File: ${path.join(ws.dir, 'dir/inner.txt')}`, '-inner', '+inner 2'),
    );
    expect(r.isError, r.content[0]?.text).toBe(false);
    expect(r.structuredContent.affected_files).toEqual([{ path: 'dir/inner.txt', operation: 'update' }]);
    await apply(patch('*** Update File: dir/inner.txt', '-inner 2', '+inner'));
  });

  it('a directory swapped for a symlink between staging and rename is refused; nothing lands outside', async () => {
    const local = makeWorkspace({ 'd/f.txt': 'same\n', 'keep.txt': 'keep\n' });
    const out = makeWorkspace({ 'f.txt': 'same\n' });
    try {
      const rc = checkRoot(local.dir, '/nonexistent-home');
      if (!rc.ok) throw new Error(rc.reason);
      const swap = () => {
        renameSync(path.join(local.dir, 'd'), path.join(local.dir, 'd.moved'));
        symlinkSync(out.dir, path.join(local.dir, 'd'));
      };
      const p = patch(
        '*** Update File: keep.txt',
        '-keep',
        '+kept',
        '*** Update File: d/f.txt',
        '-same',
        '+changed',
      );
      let err: unknown;
      try {
        await applyPatch({ root: rc.root, locks: new FileLocks() }, p, {
          hooks: { beforeStep: (s) => (s.rel === 'd/f.txt' ? swap() : undefined) },
        });
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(ToolError);
      expect((err as ToolError).code).toBe('SYMLINK_ESCAPE');
      expect(readFileSync(path.join(out.dir, 'f.txt'), 'utf8')).toBe('same\n');
      expect(readdirSync(out.dir)).toEqual(['f.txt']);
      expect(readFileSync(path.join(local.dir, 'keep.txt'), 'utf8')).toBe('keep\n');
      expect(readFileSync(path.join(local.dir, 'd.moved/f.txt'), 'utf8')).toBe('same\n');
    } finally {
      local.cleanup();
      out.cleanup();
    }
  });
});

describe('dry_run (docs/tools.md#editing-files: validates everything and writes nothing)', () => {
  it('reports what would change and writes nothing, not even new directories', async () => {
    const p = patch(
      '*** Add File: brand/new/file.txt',
      '+x',
      '*** Update File: real.txt',
      '-real',
      '+REAL',
      '*** Delete File: dir/inner.txt',
    );
    const r = await apply(p, { dry_run: true });
    expect(r.isError, r.content[0]?.text).toBe(false);
    expect(r.content[0]?.text).toBe(
      'Patch checked (+2 -2); dry_run: nothing was written:\nA brand/new/file.txt\nM real.txt\nD dir/inner.txt',
    );
    expect(r.structuredContent).toMatchObject({ ok: true, dry_run: true, additions: 2, removals: 2 });
    expect(existsSync(path.join(ws.dir, 'brand'))).toBe(false);
    expect(readFileSync(path.join(ws.dir, 'real.txt'), 'utf8')).toBe('real\n');
    expect(existsSync(path.join(ws.dir, 'dir/inner.txt'))).toBe(true);
  });

  it('a dry run reports the same errors a real run would', async () => {
    const r = await apply(patch('*** Update File: real.txt', '-not there', '+x'), { dry_run: true });
    expect(r.structuredContent.error).toMatchObject({
      code: 'PATCH_CONTEXT_NOT_FOUND',
      retryable: true,
      details: { line: 3, path: 'real.txt' },
    });
  });
});

describe('the advertised tool (docs/tools.md#results-and-errors)', () => {
  it('is listed with its schema, a worked example and truthful annotations', async () => {
    const r = await handshake(srv.url, 1, 'tools/list');
    const tools = r.json.result.tools as Array<Record<string, any>>; // eslint-disable-line @typescript-eslint/no-explicit-any
    const t = tools.find((x) => x.name === 'apply_patch')!;
    expect(tools.map((x) => x.name).indexOf('apply_patch')).toBe(
      tools.map((x) => x.name).indexOf('search_text') + 1,
    );
    // Every hint stated, readOnlyHint false included (docs/tools.md#annotations); idempotentHint only where true.
    expect(t.annotations).toEqual({ readOnlyHint: false, destructiveHint: true, openWorldHint: false });
    expect(t.inputSchema).toMatchObject({ type: 'object', additionalProperties: false, required: ['patch'] });
    expect(Object.keys(t.inputSchema.properties).sort()).toEqual(['dry_run', 'patch']);
    expect(t.description).toContain('*** Begin Patch');
    expect(t.description).toContain('*** Update File: ');
    expect(t.outputSchema.anyOf).toHaveLength(2);
  });

  it('wrong arguments are INVALID_ARGUMENT tool errors naming the accepted ones', async () => {
    const r = await callTool(srv.url, 'apply_patch', { patch: '', force: true });
    expect(r.isError).toBe(true);
    expect(r.structuredContent.error.code).toBe('INVALID_ARGUMENT');
    expect(r.structuredContent.error.details.accepted_arguments).toEqual(['patch', 'dry_run']);
  });

  it('a successful result is one concise text block, not a JSON dump', async () => {
    writeFileSync(path.join(ws.dir, 'text.txt'), 'a  \nb\n');
    mkdirSync(path.join(ws.dir, 'tmpdir'), { recursive: true });
    const r = await apply(patch('*** Update File: text.txt', '-a', '+A'));
    expect(r.content).toHaveLength(1);
    expect(r.content[0]?.text).toBe(
      "Patch applied (+1 -1):\nM text.txt\nNote: some lines matched only with trailing whitespace ignored (fuzz 1); unchanged lines kept the file's own text.",
    );
  });
});
