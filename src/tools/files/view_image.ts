// view_image: one image from the workspace as an MCP image block. The type comes from magic bytes, the size
// is checked before the file is read, and the dimensions from the header (no decoder is loaded).
import { close, read } from 'node:fs';
import { promisify } from 'node:util';
import * as z from 'zod';
import { ToolError } from '../../core/tool-error.js';
import { defineTool, READ_ONLY, type ToolContext } from '../define.js';
import { lean } from '../result.js';
import { humanBytes, pathArg, resolveExisting, type Existing } from '../common.js';
import { imageInfo } from './image-header.js';
import { openRegularForTool } from '../../workspace/confined-fs.js';

const readAsync = promisify(read);
const closeAsync = promisify(close);

const input = z.object({
  path: pathArg(),
  max_bytes: z
    .number()
    .int()
    .min(1)
    .max(20 * 1024 * 1024)
    .default(5 * 1024 * 1024),
  max_width: z.number().int().min(1).max(20_000).default(2000),
  max_height: z.number().int().min(1).max(20_000).default(2000),
});

const output = z.object({
  path: z.string(),
  mime_type: z.string(),
  size_bytes: z.number(),
  width: z.number().optional(),
  height: z.number().optional(),
});

export const viewImageTool = defineTool({
  name: 'view_image',
  title: 'View image',
  description: 'Show a PNG, JPEG, GIF or WEBP file from the workspace to the model as an image.',
  uses: ['root'],
  input,
  output,
  annotations: READ_ONLY,
  scope: 'workspace',
  async handler(args, ctx) {
    const f = resolveExisting(ctx, args.path);
    if (f.stat.isDirectory())
      throw new ToolError(
        'IS_DIRECTORY',
        `${f.rel} is a directory`,
        { path: f.rel },
        { retry: `list_dir {"path":${JSON.stringify(f.rel)}}` },
      );
    const data = await readImage(ctx, f, args.max_bytes);
    const info = imageInfo(data);
    if (!info) {
      throw new ToolError(
        'INVALID_ARGUMENT',
        `${f.rel} is not a PNG, JPEG, GIF or WEBP image`,
        { path: f.rel },
        {
          suggestion: 'Only PNG, JPEG, GIF and WEBP are shown; read text files with read_file.',
        },
      );
    }
    if ((info.width ?? 0) > args.max_width || (info.height ?? 0) > args.max_height) {
      throw new ToolError(
        'OUTPUT_TOO_LARGE',
        `${f.rel} is ${info.width}x${info.height}, larger than ${args.max_width}x${args.max_height}`,
        { width: info.width, height: info.height },
        {
          suggestion: 'Raise max_width/max_height, or make a scaled copy with exec_command and view that.',
        },
      );
    }
    const dims = info.width && info.height ? `${info.width}x${info.height}, ` : '';
    return {
      structured: lean(
        {
          path: f.rel,
          mime_type: info.mime,
          size_bytes: data.length,
          width: info.width,
          height: info.height,
        },
        ['path', 'size_bytes'],
      ),
      text: `${f.rel}: ${info.mime}, ${dims}${humanBytes(data.length)}`,
      extra: [{ type: 'image', data: data.toString('base64'), mimeType: info.mime }],
    };
  },
});

/** The file's bytes, at most `maxBytes` of them. Opened and checked on the descriptor
 *  (docs/design-notes.md#symlink-races): a FIFO answers at once, a swapped directory is refused. */
async function readImage(ctx: ToolContext<'root'>, f: Existing, maxBytes: number): Promise<Buffer> {
  const { fd, stat } = openRegularForTool(ctx.runtime.root.real, f.real, f.rel);
  try {
    const size = Number(stat.size);
    if (size > maxBytes) {
      throw new ToolError(
        'OUTPUT_TOO_LARGE',
        `${f.rel} is ${humanBytes(size)}, over max_bytes (${humanBytes(maxBytes)})`,
        { size_bytes: size, max_bytes: maxBytes },
        {
          suggestion:
            'Make a smaller copy with exec_command (e.g. convert IN -resize 1600x1600 OUT.png) and view that.',
        },
      );
    }
    const data = Buffer.allocUnsafe(size);
    let got = 0;
    while (got < size) {
      const { bytesRead } = await readAsync(fd, data, got, size - got, got);
      if (bytesRead === 0) break;
      got += bytesRead;
    }
    return data.subarray(0, got);
  } finally {
    await closeAsync(fd);
  }
}
