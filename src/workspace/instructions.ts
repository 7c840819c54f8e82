// Project instructions (docs/tools.md#paths): the root AGENTS.md and CLAUDE.md (16 KiB each, 32 KiB in
// all) become the `instructions` of initialize and server/discover. They are re-read when they change: a
// stat per call compares size, mtime and inode, so an edit shows up on the next handshake without a restart.
// A symlink leading out of the workspace or a FIFO in their place is skipped (workspace/confined-fs).
import { statSync } from 'node:fs';
import path from 'node:path';
import { readWorkspaceFile } from './confined-fs.js';
import type { WorkspaceRoot } from './paths.js';
import { utf8Boundary } from './text.js';

export const INSTRUCTION_FILES = ['AGENTS.md', 'CLAUDE.md'] as const;
export const PER_FILE_BYTES = 16 * 1024;
export const TOTAL_BYTES = 32 * 1024;

const PREAMBLE =
  'This server gives you one code workspace. Paths are relative to its root. Read with read_file, list_dir, ' +
  'list_files and search_text; change files only with edit_file or apply_patch; run commands with ' +
  'exec_command and follow them with write_stdin / read_output. Every error names the next call to make.';

interface Loaded {
  key: string;
  text: string | undefined;
  files: string[];
}

export class Instructions {
  private cache: Loaded | undefined;

  constructor(private readonly root: WorkspaceRoot) {}

  private stamp(): string {
    return INSTRUCTION_FILES.map((f) => {
      try {
        const st = statSync(path.join(this.root.lexical, f));
        return `${st.size}:${st.mtimeMs}:${st.ino}`;
      } catch {
        return '-';
      }
    }).join('|');
  }

  private load(key: string): Loaded {
    const parts: string[] = [];
    const files: string[] = [];
    let budget = TOTAL_BYTES;
    for (const f of INSTRUCTION_FILES) {
      const buf = readWorkspaceFile(this.root.real, path.join(this.root.lexical, f), PER_FILE_BYTES + 1);
      if (!buf) continue;
      files.push(f);
      const limit = Math.min(PER_FILE_BYTES, budget);
      const cut = buf.length > limit;
      const body = buf.subarray(0, utf8Boundary(buf, limit)).toString('utf8');
      budget -= Buffer.byteLength(body);
      parts.push(
        `--- ${f} ---\n${body}${cut ? `\n[${f} cut at ${limit} bytes; read_file {"path":"${f}"} shows the rest]` : ''}`,
      );
      if (budget <= 0) break;
    }
    const text = parts.length ? `${PREAMBLE}\n\nProject instructions:\n${parts.join('\n\n')}` : PREAMBLE;
    return { key, text, files };
  }

  private current(): Loaded {
    const key = this.stamp();
    if (!this.cache || this.cache.key !== key) this.cache = this.load(key);
    return this.cache;
  }

  text(): string | undefined {
    return this.current().text;
  }

  files(): string[] {
    return this.current().files;
  }
}
