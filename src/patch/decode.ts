// Decoding a file a writing tool is about to change: UTF-8 text (BOM and line endings kept by text-doc.ts), or a
// specific refusal — BINARY_FILE for NUL bytes, UNSUPPORTED_ENCODING otherwise — worded for the tool that asked.
import { ToolError } from '../core/tool-error.js';
import { decodeDoc, type TextDoc } from './text-doc.js';

export interface DecodeFor {
  /** The workspace-relative path, for messages. */
  rel: string;
  /** "patch" or "edit": what the refusal says could not be done. */
  verb: string;
  /** The tool named in the suggestion. */
  tool: string;
  /** The patch line naming the file (apply_patch). */
  line?: number;
}

export function decodeForWrite(buf: Buffer, f: DecodeFor): TextDoc {
  const d = decodeDoc(buf);
  if (d.ok) return d.doc;
  const details = f.line === undefined ? { path: f.rel } : { path: f.rel, line: f.line };
  if (d.reason === 'binary') {
    throw new ToolError(
      'BINARY_FILE',
      `cannot ${f.verb} ${f.rel}: it is a binary file (it contains NUL bytes)`,
      details,
      { suggestion: `${f.tool} edits text; replace binary files with exec_command.` },
    );
  }
  throw new ToolError(
    'UNSUPPORTED_ENCODING',
    `cannot ${f.verb} ${f.rel}: it is not valid UTF-8 text`,
    details,
    {
      suggestion: 'Convert it to UTF-8 first (exec_command iconv …) or edit it with exec_command.',
    },
  );
}
