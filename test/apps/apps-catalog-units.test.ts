// The catalog a client that declared MCP Apps sees (src/tools/catalog.ts, docs/review-card.md#who-sees-it): the
// tools with a card carry `_meta.ui.resourceUri`, the app-only tools follow with `visibility: ["app"]` and are
// callable only by such a client; every other client's catalog is the one without them, and an app-only tool is
// an unknown name to it. Built with the real registry and a real app-only tool definition.
import * as z from 'zod';
import { describe, expect, it } from 'vitest';
import { defineTool } from '../../src/tools/define.js';
import { ALL_TOOLS, buildCatalog, erase } from '../../src/tools/registry.js';
import { CARD_TOOLS, CARD_URI, declaresUi } from '../../src/tools/apps.js';

const appOnly = erase(
  defineTool({
    name: 'app_only_probe',
    title: 'App-only probe',
    description: 'A tool only the card calls.',
    uses: [],
    input: z.object({ point: z.string() }),
    output: z.object({ point: z.string() }),
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
    handler: (args) => ({ structured: { point: args.point }, text: args.point }),
  }),
);

const opts = { enableViewImage: true, fakeReadonly: false };

describe('the MCP Apps catalog', () => {
  const catalog = buildCatalog(opts, ALL_TOOLS, [appOnly]);

  it('lists the app-only tool for a declared client only, after the others, with visibility app', () => {
    const plain = catalog.listPayload.map((t) => t.name);
    const ui = catalog.uiListPayload.map((t) => t.name);
    expect(plain).not.toContain('app_only_probe');
    expect(ui).toEqual([...plain, 'app_only_probe']);
    expect(catalog.uiListPayload.at(-1)?._meta).toEqual({
      ui: { resourceUri: CARD_URI, visibility: ['app'] },
    });
    expect(catalog.names).not.toContain('app_only_probe');
  });

  it('the card tools carry the resource; every other tool is the very object a plain client gets', () => {
    const names = catalog.listPayload.map((t) => String(t.name));
    expect(names.filter((n) => CARD_TOOLS.has(n))).toEqual(['apply_patch', 'edit_file', 'show_changes']);
    catalog.listPayload.forEach((t, i) => {
      const u = catalog.uiListPayload[i] as Record<string, unknown>;
      if (CARD_TOOLS.has(String(t.name))) {
        expect(u._meta).toEqual({ ui: { resourceUri: CARD_URI } });
        expect(t._meta).toBeUndefined();
      } else expect(u).toBe(t);
    });
  });

  it('an app-only tool is an unknown name unless the client declared the extension', async () => {
    expect(await catalog.lookup('app_only_probe')).toBeUndefined();
    expect(await catalog.lookup('app_only_probe', false)).toBeUndefined();
    expect((await catalog.lookup('app_only_probe', true))?.name).toBe('app_only_probe');
    expect((await catalog.lookup('read_file', false))?.name).toBe('read_file');
  });

  it('only the MCP App MIME type under io.modelcontextprotocol/ui is a declaration', () => {
    const ui = (v: unknown) => ({ extensions: { 'io.modelcontextprotocol/ui': v } });
    expect(declaresUi(ui({ mimeTypes: ['text/html;profile=mcp-app'] }))).toBe(true);
    for (const caps of [
      undefined,
      null,
      {},
      { extensions: [] },
      ui({}),
      ui({ mimeTypes: 'text/html;profile=mcp-app' }),
      ui({ mimeTypes: ['text/html'] }),
      { extensions: { 'io.modelcontextprotocol/apps': { mimeTypes: ['text/html;profile=mcp-app'] } } },
    ])
      expect(declaresUi(caps), JSON.stringify(caps)).toBe(false);
  });
});
