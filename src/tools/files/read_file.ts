// read_file (docs/tools.md#paths): a UTF-8 line range of one file, at most 2000 lines and
// max_bytes per call, with next_action to continue. Binary files and other encodings are refused by name.
import * as z from 'zod';
import { ToolError } from '../../core/tool-error.js';
import { validUtf8, utf8Boundary } from '../../workspace/text.js';
import { resolvePath, notFound } from '../../workspace/paths.js';
import { NEXT_ACTION } from '../schema.js';
import { callText, lean } from '../result.js';
import { defineTool, READ_ONLY, type ToolContext } from '../define.js';
import { pathArg } from '../common.js';
import { readRange } from './read-range.js';

export const MAX_LINES_PER_CALL = 2000;
export const DEFAULT_MAX_BYTES = 131_072;
export const MAX_BYTES_LIMIT = 1_048_576;

const input = z.object({
  path: pathArg(),
  start_line: z.number().int().min(1).default(1),
  end_line: z.number().int().min(1).optional().describe('Inclusive.'),
  max_lines: z.number().int().min(1).max(MAX_LINES_PER_CALL).optional(),
  max_bytes: z.number().int().min(1).max(MAX_BYTES_LIMIT).default(DEFAULT_MAX_BYTES),
  line_numbers: z.boolean().default(false).describe('Prefix each line with "N: ".'),
});

/** A whole file is `path, content, total_lines`; a part also says which lines and how large the file is. */
const output = z.object({
  path: z.string(),
  content: z.string(),
  start_line: z.number().optional(),
  end_line: z.number().optional(),
  total_lines: z.number().optional(),
  total_bytes: z.number().optional(),
  truncated: z.boolean().optional(),
  truncated_by: z.enum(['max_lines', 'max_bytes']).optional(),
  next_action: NEXT_ACTION.optional(),
});

type Args = z.output<typeof input>;

/** The range asked for as text: refused when the file is binary, the start is past its end, or not UTF-8. */
async function readText(ctx: ToolContext<'root'>, args: Args) {
  if (args.end_line !== undefined && args.end_line < args.start_line) {
    throw new ToolError(
      'INVALID_ARGUMENT',
      `end_line (${args.end_line}) is before start_line (${args.start_line})`,
      {},
      {
        suggestion: 'Pass end_line ≥ start_line, or leave end_line out to read to the end.',
      },
    );
  }
  const r = resolvePath(ctx.runtime.root, args.path);
  if (!r.exists) throw notFound(r.rel, 'file');
  const range = await readRange(ctx.runtime.root.real, r.real, r.rel, {
    startLine: args.start_line,
    endLine: args.end_line,
    maxLines: Math.min(args.max_lines ?? MAX_LINES_PER_CALL, MAX_LINES_PER_CALL),
    maxBytes: args.max_bytes,
  });
  if (range.binary) {
    throw new ToolError(
      'BINARY_FILE',
      `${r.rel} is a binary file (it contains NUL bytes)`,
      { path: r.rel, size_bytes: range.totalBytes },
      {
        suggestion:
          'Binary files cannot be read as text; view_image shows images, exec_command with xxd or file inspects others.',
      },
    );
  }
  if (args.start_line > Math.max(range.totalLines, 1)) {
    throw new ToolError(
      'INVALID_ARGUMENT',
      `start_line ${args.start_line} is past the end of ${r.rel} (${range.totalLines} lines)`,
      { total_lines: range.totalLines },
      {
        retry: callText('read_file', { path: r.rel, start_line: Math.max(1, range.totalLines - 99) }),
      },
    );
  }
  const buf = range.lineCut ? range.buf.subarray(0, utf8Boundary(range.buf, range.buf.length)) : range.buf;
  if (!validUtf8(buf)) {
    throw new ToolError(
      'UNSUPPORTED_ENCODING',
      `${r.rel} is not valid UTF-8 text`,
      { path: r.rel },
      {
        suggestion:
          'Convert it for reading with exec_command, e.g. iconv -f latin1 -t utf-8 FILE, or inspect it with xxd.',
      },
    );
  }
  let content = buf.toString('utf8');
  if (args.start_line === 1 && content.charCodeAt(0) === 0xfeff) content = content.slice(1);
  return { rel: r.rel, range, content };
}

/** The arguments of the call that continues at `next`, repeating only what the caller set. */
function continuation(args: Args, rel: string, next: number): Record<string, unknown> {
  const nextArgs: Record<string, unknown> = { path: rel, start_line: next };
  if (args.end_line !== undefined) nextArgs.end_line = args.end_line;
  if (args.max_lines !== undefined) nextArgs.max_lines = args.max_lines;
  if (args.max_bytes !== DEFAULT_MAX_BYTES) nextArgs.max_bytes = args.max_bytes;
  if (args.line_numbers) nextArgs.line_numbers = true;
  return nextArgs;
}

export const readFileTool = defineTool({
  name: 'read_file',
  title: 'Read file',
  description:
    `Read a UTF-8 text file or a range of its lines: at most ${MAX_LINES_PER_CALL} lines and max_bytes per call, ` +
    'next_action continues.',
  uses: ['root'],
  input,
  output,
  annotations: READ_ONLY,
  scope: 'workspace',
  async handler(args, ctx) {
    const { rel, range, content } = await readText(ctx, args);
    const truncated = range.truncatedBy !== null;
    const partial = args.start_line > 1 || range.lastLine < range.totalLines;
    const nextArgs = truncated ? continuation(args, rel, range.lastLine + 1) : undefined;
    const structured = lean(
      {
        path: rel,
        content,
        ...(partial ? { start_line: args.start_line, end_line: range.lastLine } : {}),
        total_lines: range.totalLines,
        ...(partial || truncated ? { total_bytes: range.totalBytes } : {}),
        truncated,
        truncated_by: range.truncatedBy,
        next_action: nextArgs && { tool: 'read_file', arguments: nextArgs },
      },
      ['path', 'content'],
    );
    const nextCall = nextArgs ? callText('read_file', nextArgs) : '';
    let text = args.line_numbers ? numberLines(content, args.start_line) : content;
    if (truncated || partial || range.lineCut) {
      const notes = [`lines ${args.start_line}-${range.lastLine} of ${range.totalLines}`];
      if (range.lineCut) notes.push(`line ${range.lastLine} is longer than max_bytes and was cut`);
      if (truncated) notes.push(`truncated by ${range.truncatedBy}; continue with ${nextCall}`);
      text += `${text.endsWith('\n') || text === '' ? '' : '\n'}[${notes.join('; ')}]`;
    }
    return { structured, text };
  },
});

function numberLines(content: string, first: number): string {
  const lines = content.split('\n');
  const last = lines[lines.length - 1] === '' ? lines.pop() : undefined;
  const out = lines.map((l, i) => `${first + i}: ${l}`).join('\n');
  return last === undefined ? out : out + '\n';
}
