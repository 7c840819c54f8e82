// The one place tool outcomes and ToolErrors become MCP CallToolResults (docs/tools.md#results-and-errors).
// Success: one text block for the model + structuredContent {ok:true,...}. Failure: isError with {ok:false,
// error} and text lines `CODE: message`, `Category: … Retryable: …`, then the exact next call.
import { ToolError } from '../core/tool-error.js';
import type { ToolOutcome } from './define.js';
import { lean } from '../core/lean.js';

/** Results leave out what carries no information (core/lean.ts); tools import it from here. */
export { lean };

/** Emergency ceiling on model-facing text; each tool has tighter limits of its own. */
export const TEXT_CEILING_BYTES = 2 * 1024 * 1024;

/** A type, not an interface, so that it is also a plain JSON object (`Record<string, unknown>`) to the dispatcher. */
export type CallToolResult = {
  content: Array<{ type: 'text'; text: string } | { type: 'image'; data: string; mimeType: string }>;
  structuredContent: Record<string, unknown>;
  isError: boolean;
  _meta?: Record<string, unknown>;
};

function ceiling(text: string): string {
  if (text.length * 3 <= TEXT_CEILING_BYTES) return text;
  const b = Buffer.from(text);
  if (b.length <= TEXT_CEILING_BYTES) return text;
  let n = TEXT_CEILING_BYTES;
  while (n > 0 && ((b[n] as number) & 0xc0) === 0x80) n--;
  return b.subarray(0, n).toString('utf8') + '\n[output cut at the 2 MiB ceiling]';
}

/** `ui`: the client declared MCP Apps; only then does the host's data (`o.meta`) travel, as `_meta`. */
export function successResult(o: ToolOutcome, ui = false): CallToolResult {
  const content: CallToolResult['content'] = [{ type: 'text', text: ceiling(o.text) }];
  if (o.extra) content.push(...o.extra);
  const r: CallToolResult = { content, structuredContent: { ok: true, ...o.structured }, isError: false };
  if (ui && o.meta) r._meta = o.meta;
  return r;
}

export function errorStructured(e: ToolError): Record<string, unknown> {
  return {
    ok: false,
    error: {
      code: e.code,
      message: e.message,
      category: e.category,
      retryable: e.retryable,
      details: e.details,
    },
  };
}

export function errorText(e: ToolError): string {
  const lines = [`${e.code}: ${e.message}`];
  lines.push(
    `Category: ${e.category}. Retryable: ${e.retryable ? 'yes' : 'no'}.` +
      (e.retryable ? '' : ' Do not repeat the same call unchanged.'),
  );
  if (e.hints.retry) lines.push(`Retry: ${e.hints.retry}`);
  if (e.hints.suggestion) lines.push(`Suggested action: ${e.hints.suggestion}`);
  return lines.join('\n');
}

export function errorResult(e: ToolError): CallToolResult {
  return {
    content: [{ type: 'text', text: errorText(e) }],
    structuredContent: errorStructured(e),
    isError: true,
  };
}

export function internalError(): ToolError {
  return new ToolError(
    'INTERNAL_ERROR',
    'the server failed while running this tool; the failure was logged',
    {},
    {
      suggestion: 'Try once more; if it fails again, report it with server_info output.',
    },
  );
}

/** `tool {"a":1}` — how a next call is spelled in model-facing text. */
export function callText(tool: string, args: Record<string, unknown>): string {
  return `${tool} ${JSON.stringify(args)}`;
}
