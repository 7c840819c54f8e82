// docs/tools.md#the-tools (view_image): one image block, type from magic bytes, size checked first.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callTool } from '../helpers/rpc.js';
import { startInProcess, type InProcessServer } from '../helpers/server.js';
import { makeWorkspace, type TempWorkspace } from '../helpers/workspace.js';
import { png } from '../helpers/png.js';

let ws: TempWorkspace;
let srv: InProcessServer;
beforeAll(async () => {
  const gif = Buffer.from('GIF89a\x03\x00\x02\x00\x00\x00\x00;', 'latin1');
  ws = makeWorkspace({
    'img/a.png': png(4, 3),
    'img/big.png': png(3000, 10),
    'img/b.gif': gif,
    'img/fake.png': 'not an image\n',
  });
  srv = await startInProcess({ workspace: ws.dir });
});
afterAll(async () => {
  await srv.close();
  ws.cleanup();
});

describe('view_image', () => {
  it('returns a text line and one image block with the base64 bytes', async () => {
    const r = await callTool(srv.url, 'view_image', { path: 'img/a.png' });
    expect(r.isError).toBe(false);
    expect(r.content).toHaveLength(2);
    expect(r.content[0]?.text).toMatch(/^img\/a\.png: image\/png, 4x3, \d+ B$/);
    expect(r.content[1]).toMatchObject({ type: 'image', mimeType: 'image/png' });
    expect(Buffer.from(r.content[1]?.data ?? '', 'base64').equals(png(4, 3))).toBe(true);
    expect(r.structuredContent).toMatchObject({ ok: true, mime_type: 'image/png', width: 4, height: 3 });
  });
  it('detects GIF by magic bytes', async () => {
    expect((await callTool(srv.url, 'view_image', { path: 'img/b.gif' })).structuredContent).toMatchObject({
      mime_type: 'image/gif',
      width: 3,
      height: 2,
    });
  });
  it('refuses non-images, oversize files and oversize dimensions with a next step', async () => {
    expect(
      (await callTool(srv.url, 'view_image', { path: 'img/fake.png' })).structuredContent.error.code,
    ).toBe('INVALID_ARGUMENT');
    const small = await callTool(srv.url, 'view_image', { path: 'img/a.png', max_bytes: 10 });
    expect(small.structuredContent.error.code).toBe('OUTPUT_TOO_LARGE');
    expect(small.content[0]?.text).toContain('Suggested action:');
    expect(
      (await callTool(srv.url, 'view_image', { path: 'img/big.png' })).structuredContent.error,
    ).toMatchObject({ code: 'OUTPUT_TOO_LARGE', details: { width: 3000, height: 10 } });
    expect((await callTool(srv.url, 'view_image', { path: 'img' })).structuredContent.error.code).toBe(
      'IS_DIRECTORY',
    );
    expect(
      (await callTool(srv.url, 'view_image', { path: '/etc/hostname' })).structuredContent.error.code,
    ).toBe('PATH_OUTSIDE_WORKSPACE');
  });
  it('SERVICE_ENABLE_VIEW_IMAGE=0 removes it from the catalog', async () => {
    const off = await startInProcess({ workspace: ws.dir, env: { SERVICE_ENABLE_VIEW_IMAGE: '0' } });
    try {
      expect(off.runtime.catalog.names).not.toContain('view_image');
      const r = await fetch(off.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer test-token-0123456789abcdef' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'view_image', arguments: { path: 'img/a.png' } },
        }),
      });
      expect(((await r.json()) as { error: { code: number } }).error.code).toBe(-32602);
    } finally {
      await off.close();
    }
  });
});
