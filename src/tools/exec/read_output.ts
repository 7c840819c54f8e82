// read_output (docs/tools.md#commands): page a command's retained output by absolute byte offsets. Each
// stream keeps its first 64 KiB and its most recent bytes; an offset in the dropped middle moves to the
// retained tail and says how many bytes were skipped. Reading never changes what write_stdin returns next.
import * as z from 'zod';
import { ToolError } from '../../core/tool-error.js';
import { NEXT_ACTION } from '../schema.js';
import { callText, lean } from '../result.js';
import { defineTool, READ_ONLY } from '../define.js';
import { HEAD_BYTES } from '../../process/commands/output.js';
import { fmt, READ_LIMIT_MAX, readPage } from './view.js';

const REF = /^command:(?<id>[A-Za-z0-9_-]{1,200}):(?<stream>stdout|stderr)$/;

const input = z.object({
  output_ref: z.string().describe('"command:<command_id>:stdout" (or :stderr), as in output_refs.'),
  offset: z.number().int().min(0).default(0),
  limit: z.number().int().min(1).max(READ_LIMIT_MAX).default(4096),
});

const output = z.object({
  content: z.string(),
  offset: z.number().optional(),
  eof: z.boolean().optional(),
  skipped_bytes: z.number().optional(),
  /** Left out when 0 (an empty stream), as every field at its default (core/lean.ts). */
  total_bytes: z.number().optional(),
  next_action: NEXT_ACTION.optional(),
});

export const readOutputTool = defineTool({
  name: 'read_output',
  title: 'Read command output',
  description:
    `Page a command's output by absolute byte offset (e.g. what a result left out). A stream keeps its first ${HEAD_BYTES / 1024} KiB ` +
    'and its latest bytes; an offset in the dropped middle moves to the kept tail (skipped_bytes). next_action continues; ' +
    'eof ends a finished stream. Example: {"output_ref": "command:Qm…:stdout", "offset": 65536}.',
  uses: ['commands'],
  input,
  output,
  annotations: READ_ONLY,
  scope: 'workspace',
  handler(args, ctx) {
    const m = REF.exec(args.output_ref);
    if (!m) {
      throw new ToolError(
        'INVALID_ARGUMENT',
        `output_ref ${JSON.stringify(args.output_ref)} is not "command:<command_id>:stdout|stderr"`,
        {},
        {
          suggestion: 'Use one of the output_refs an exec_command or write_stdin result returned.',
        },
      );
    }
    // The pattern matched: both groups are set, and the stream is one of the two names.
    const id = m.groups?.id ?? '';
    const stream = m.groups?.stream === 'stderr' ? 'stderr' : 'stdout';
    const c = ctx.runtime.commands.get(id);
    const buf = c.streams[stream];
    const page = readPage(buf, args.offset, args.limit);
    const total = buf.total;
    const eof = page.end >= total && !c.running;
    // The next offset is in next_action; `offset` only when the page did not start where it was asked.
    const structured: z.output<typeof output> = lean(
      {
        content: page.content,
        offset: page.offset !== args.offset ? page.offset : undefined,
        eof,
        skipped_bytes: page.skipped,
        total_bytes: total,
      },
      ['content'],
    );
    const notes = [
      `bytes ${fmt(page.offset)}–${fmt(page.end)} of ${fmt(total)} (${stream} of command ${id}${c.running ? ', still running' : ''})`,
    ];
    if (page.skipped) notes.push(`skipped ${fmt(page.skipped)} bytes that are no longer kept`);
    if (page.end < total) {
      const next = { output_ref: args.output_ref, offset: page.end, limit: args.limit };
      structured.next_action = { tool: 'read_output', arguments: next };
      notes.push(`continue with ${callText('read_output', next)}`);
    } else if (c.running)
      notes.push(`at the end for now; poll with ${callText('write_stdin', { command_id: id, chars: '' })}`);
    else notes.push('end of output');
    const text =
      page.content +
      (page.content === '' || page.content.endsWith('\n') ? '' : '\n') +
      `[${notes.join('; ')}]`;
    return { structured, text };
  },
});
