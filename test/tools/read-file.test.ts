// docs/tools.md#the-tools (read_file) and docs/tools.md#paths: ranges, truncation with next_action,
// encodings, and every escape route, through a real HTTP server.
import { symlinkSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callTool } from '../helpers/rpc.js';
import { startInProcess, type InProcessServer } from '../helpers/server.js';
import { makeWorkspace, type TempWorkspace } from '../helpers/workspace.js';

let ws: TempWorkspace;
let outside: TempWorkspace;
let srv: InProcessServer;
const lines = (n: number) => Array.from({ length: n }, (_, i) => `line ${i + 1}`).join('\n') + '\n';

beforeAll(async () => {
  outside = makeWorkspace({ 'secret.txt': 'top secret\n' });
  ws = makeWorkspace({
    'small.txt': 'alpha\nbeta\ngamma\n',
    'many.txt': lines(5000),
    'noeol.txt': 'one\ntwo',
    'crlf.txt': 'a\r\nb\r\n',
    'bom.txt': '\ufeffhello\nworld\n',
    'empty.txt': '',
    'bin.dat': Buffer.from([0x89, 0x50, 0x00, 0x01, 0x02]),
    'latin1.txt': Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]),
    'long.txt': 'x'.repeat(300) + '\nshort\n',
    'ünï cödé/файл.txt': 'unicode path\n',
    'dir/inner.txt': 'inner\n',
  });
  symlinkSync(path.join(outside.dir, 'secret.txt'), path.join(ws.dir, 'leak.txt'));
  symlinkSync(outside.dir, path.join(ws.dir, 'leakdir'));
  mkdirSync(path.join(ws.dir, 'sub'));
  symlinkSync(path.join(ws.dir, 'small.txt'), path.join(ws.dir, 'sub', 'ok-link.txt'));
  srv = await startInProcess({ workspace: ws.dir });
});
afterAll(async () => {
  await srv.close();
  ws.cleanup();
  outside.cleanup();
});

const read = (args: Record<string, unknown>) => callTool(srv.url, 'read_file', args);

describe('read_file: content and ranges', () => {
  it('reads a whole small file: path, content, total_lines, nothing at its default (docs/design-notes.md#lean-results)', async () => {
    const r = await read({ path: 'small.txt' });
    expect(r.isError).toBe(false);
    expect(r.structuredContent).toEqual({
      ok: true,
      path: 'small.txt',
      content: 'alpha\nbeta\ngamma\n',
      total_lines: 3,
    });
    expect(r.content[0]?.text).toBe('alpha\nbeta\ngamma\n');
  });

  it('returns a line range and says which lines it shows', async () => {
    const r = await read({ path: 'small.txt', start_line: 2, end_line: 2 });
    expect(r.structuredContent).toEqual({
      ok: true,
      path: 'small.txt',
      content: 'beta\n',
      start_line: 2,
      end_line: 2,
      total_lines: 3,
      total_bytes: 17,
    });
    expect(r.content[0]?.text).toContain('[lines 2-2 of 3]');
  });

  it('caps at 2000 lines and the next_action continues exactly', async () => {
    const first = await read({ path: 'many.txt' });
    expect(first.structuredContent).toMatchObject({
      end_line: 2000,
      total_lines: 5000,
      truncated: true,
      truncated_by: 'max_lines',
    });
    expect(first.structuredContent.next_start_line).toBeUndefined(); // next_action says it
    expect(first.structuredContent.next_action).toEqual({
      tool: 'read_file',
      arguments: { path: 'many.txt', start_line: 2001 },
    });
    let content = first.structuredContent.content as string;
    let next = first.structuredContent.next_action;
    for (let i = 0; next && i < 10; i++) {
      const r = await callTool(srv.url, next.tool, next.arguments);
      content += r.structuredContent.content;
      next = r.structuredContent.next_action;
    }
    expect(content).toBe(lines(5000));
  });

  it('truncates by max_bytes on a line boundary and carries max_bytes forward', async () => {
    const r = await read({ path: 'many.txt', max_bytes: 100 });
    const c = r.structuredContent.content as string;
    expect(Buffer.byteLength(c)).toBeLessThanOrEqual(100);
    expect(c.endsWith('\n')).toBe(true);
    expect(r.structuredContent.truncated_by).toBe('max_bytes');
    expect(r.structuredContent.next_action.arguments).toMatchObject({
      max_bytes: 100,
      start_line: r.structuredContent.end_line + 1,
    });
  });

  it('cuts a single line longer than max_bytes and says so', async () => {
    const r = await read({ path: 'long.txt', max_bytes: 50 });
    expect(r.structuredContent.content).toBe('x'.repeat(50));
    expect(r.content[0]?.text).toContain('longer than max_bytes');
    expect(r.structuredContent.next_action.arguments.start_line).toBe(2);
  });

  it('max_lines limits and line_numbers prefixes', async () => {
    const r = await read({ path: 'many.txt', start_line: 10, max_lines: 2, line_numbers: true });
    expect(r.content[0]?.text?.startsWith('10: line 10\n11: line 11\n')).toBe(true);
    expect(r.structuredContent.content).toBe('line 10\nline 11\n');
    expect(r.structuredContent.next_action.arguments).toEqual({
      path: 'many.txt',
      start_line: 12,
      max_lines: 2,
      line_numbers: true,
    });
  });

  it('keeps CRLF, strips a BOM, handles no final newline and empty files', async () => {
    expect((await read({ path: 'crlf.txt' })).structuredContent.content).toBe('a\r\nb\r\n');
    expect((await read({ path: 'bom.txt' })).structuredContent.content).toBe('hello\nworld\n');
    const ne = await read({ path: 'noeol.txt' });
    expect(ne.structuredContent).toMatchObject({ content: 'one\ntwo', total_lines: 2 });
    expect((await read({ path: 'empty.txt' })).structuredContent).toEqual({
      ok: true,
      path: 'empty.txt',
      content: '',
    });
  });

  it('reads unicode paths, absolute paths inside the root, and in-workspace symlinks', async () => {
    expect((await read({ path: 'ünï cödé/файл.txt' })).structuredContent.content).toBe('unicode path\n');
    expect((await read({ path: path.join(ws.dir, 'dir/inner.txt') })).structuredContent.path).toBe(
      'dir/inner.txt',
    );
    expect((await read({ path: 'sub/ok-link.txt' })).structuredContent.content).toBe('alpha\nbeta\ngamma\n');
    expect((await read({ path: 'dir/../small.txt' })).structuredContent.path).toBe('small.txt');
  });
});

describe('read_file: errors name the next step', () => {
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ['parent escape', { path: '../x' }, 'PATH_OUTSIDE_WORKSPACE'],
    ['absolute outside', { path: '/etc/passwd' }, 'PATH_OUTSIDE_WORKSPACE'],
    ['dotdot through a subdir', { path: 'a/../../x' }, 'PATH_OUTSIDE_WORKSPACE'],
    ['symlink to a file outside', { path: 'leak.txt' }, 'SYMLINK_ESCAPE'],
    ['through a symlinked dir outside', { path: 'leakdir/secret.txt' }, 'SYMLINK_ESCAPE'],
    ['NUL byte', { path: 'small\u0000.txt' }, 'INVALID_ARGUMENT'],
    ['empty path', { path: '' }, 'INVALID_ARGUMENT'],
    ['missing file', { path: 'nope.txt' }, 'NOT_FOUND'],
    ['directory', { path: 'dir' }, 'IS_DIRECTORY'],
    ['binary', { path: 'bin.dat' }, 'BINARY_FILE'],
    ['latin-1', { path: 'latin1.txt' }, 'UNSUPPORTED_ENCODING'],
    ['start past end', { path: 'small.txt', start_line: 10 }, 'INVALID_ARGUMENT'],
    ['end before start', { path: 'small.txt', start_line: 3, end_line: 2 }, 'INVALID_ARGUMENT'],
    ['wrong type', { path: 'small.txt', start_line: 'one' }, 'INVALID_ARGUMENT'],
    ['unknown argument', { path: 'small.txt', offset: 3 }, 'INVALID_ARGUMENT'],
    ['over the byte cap', { path: 'small.txt', max_bytes: 2_000_000 }, 'INVALID_ARGUMENT'],
    ['missing path', {}, 'INVALID_ARGUMENT'],
  ];
  it.each(cases)('%s → %s', async (_name, args, code) => {
    const r = await read(args);
    expect(r.isError).toBe(true);
    expect(r.structuredContent.ok).toBe(false);
    expect(r.structuredContent.error.code).toBe(code);
    const text = r.content[0]?.text ?? '';
    expect(text.startsWith(`${code}: `)).toBe(true);
    expect(text).toMatch(/Category: \w+\. Retryable: no\. Do not repeat/);
  });

  it('the unknown-argument error lists what is accepted', async () => {
    const r = await read({ path: 'small.txt', offset: 3 });
    expect(r.structuredContent.error.message).toContain('"offset"');
    expect(r.structuredContent.error.details.accepted_arguments).toContain('start_line');
  });

  it('a secret outside is never returned, whatever the spelling', async () => {
    for (const p of [
      'leak.txt',
      'leakdir/secret.txt',
      path.join(outside.dir, 'secret.txt'),
      `${ws.dir}/../${path.basename(outside.dir)}/secret.txt`,
    ]) {
      const r = await read({ path: p });
      expect(r.isError).toBe(true);
      expect(JSON.stringify(r)).not.toContain('top secret');
    }
  });
});

describe('read_file: the line index of large files', () => {
  it('pages through a large file identically before and after it changes on disk', async () => {
    const big =
      Array.from({ length: 30_000 }, (_, i) => `row ${i + 1} ${'x'.repeat(i % 50)}`).join('\n') + '\n';
    ws.write('big.txt', big);
    const readAll = async () => {
      let r = await read({ path: 'big.txt' });
      let content = r.structuredContent.content as string;
      for (let i = 0; r.structuredContent.next_action && i < 50; i++) {
        r = await callTool(srv.url, 'read_file', r.structuredContent.next_action.arguments);
        content += r.structuredContent.content;
      }
      return { content, total: r.structuredContent.total_lines };
    };
    expect(await readAll()).toEqual({ content: big, total: 30_000 });
    // Same size, different bytes: the cached index must not be trusted.
    const changed = big.replace('row 1 ', 'ROW 1 ').replace('row 29999 ', 'r\now 29999 ').replace(/\n$/, '');
    ws.write('big.txt', changed);
    expect(await readAll()).toEqual({ content: changed, total: 30_001 });
    const mid = await read({ path: 'big.txt', start_line: 29_999, end_line: 30_000 });
    expect(mid.structuredContent.content).toBe('r\now 29999 ' + 'x'.repeat(29_998 % 50) + '\n');
  });
});
