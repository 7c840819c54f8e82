// The lines of one file as an engine meets them (in line order), turned into matches with their context: a
// match is complete once the line `context_lines` after it has arrived (or the file ended). Only the last
// `context_lines` lines and the matches still waiting for their after-context are held, so a file with a
// million matching lines costs no more memory than one.
import type { LineProof } from './types.js';
import type { MatchPage } from './match-page.js';

interface Line {
  no: number;
  preview: string;
  proof?: LineProof;
}

interface Pending extends Line {
  column: number;
}

export class FileMatches {
  private readonly recent: Line[] = [];
  private readonly pending: Pending[] = [];

  constructor(
    private readonly path: string,
    private readonly contextLines: number,
    private readonly page: MatchPage,
  ) {}

  /** One line (`column` set for a matching line); false when the page wants no more matches. */
  line(no: number, preview: string, column: number | undefined, proof?: LineProof): boolean {
    if (!this.release(no)) return false;
    const l: Line = { no, preview, proof };
    if (column !== undefined && this.page.wanted(this.path, no)) this.pending.push({ ...l, column });
    if (this.contextLines > 0) {
      this.recent.push(l);
      if (this.recent.length > 2 * this.contextLines + 1) this.recent.shift();
    }
    return this.contextLines > 0 || this.release(Infinity);
  }

  /** The file ended: every waiting match is complete. */
  end(): boolean {
    return this.release(Infinity);
  }

  /** Completes the waiting matches whose after-context ends before line `upTo`. */
  private release(upTo: number): boolean {
    const n = this.contextLines;
    while (this.pending.length && (this.pending[0] as Pending).no + n < upTo) {
      const m = this.pending.shift() as Pending;
      const around = this.recent.filter((l) => l.no >= m.no - n && l.no <= m.no + n && l.no !== m.no);
      const before = around.filter((l) => l.no < m.no);
      const after = around.filter((l) => l.no > m.no);
      const proofs = [m, ...around].flatMap((l) => (l.proof ? [l.proof] : []));
      const ok = this.page.offer(
        {
          path: this.path,
          line: m.no,
          column: m.column,
          preview: m.preview,
          before: before.map((l) => l.preview),
          after: after.map((l) => l.preview),
        },
        proofs.length ? proofs : undefined,
      );
      if (!ok) return false;
    }
    return true;
  }
}
