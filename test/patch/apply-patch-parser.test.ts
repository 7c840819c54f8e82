// docs/tools.md#editing-files (parse errors name the line number) and architecture style 4 (parsers return
// values, never throw): the parser against thousands of mangled patches, plus the parsed shape of the
// leniencies that golden scenarios can only show through their effect.
import { describe, expect, it } from 'vitest';
import { parsePatch } from '../../src/patch/parser.js';
import type { UpdateOp } from '../../src/patch/types.js';

const FRAGMENTS = [
  '*** Begin Patch',
  '*** End Patch',
  '*** Update File: a.txt',
  '*** Add File: b/c.txt',
  '*** Delete File: d.txt',
  '*** Move to: e.txt',
  '*** End of File',
  '@@',
  '@@ def f():',
  '@@ -1,3 +1,4 @@',
  ' context',
  '-removed',
  '+added',
  '',
  '\\ No newline at end of file',
  "<<'EOF'",
  'EOF',
  '```',
  'diff --git a/x b/x',
  '--- a/x',
  '+++ b/x',
  '--- /dev/null',
  'rename from "q\\303\\251"',
  'garbage line',
  '\t*** Begin Patch ',
  '"unterminated',
];

/** Deterministic pseudo-random numbers (a failing case must be reproducible). */
function rng(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s * 1103515245 + 12345) & 0x7fffffff;
    return s / 0x7fffffff;
  };
}

describe('parser robustness (architecture style 4; docs/tools.md#editing-files: parse errors name the line)', () => {
  it('returns a value for 5000 mangled patches, and every error names a line of the text', () => {
    const next = rng(42);
    for (let n = 0; n < 5000; n++) {
      const count = 1 + Math.floor(next() * 14);
      const lines = Array.from(
        { length: count },
        () => FRAGMENTS[Math.floor(next() * FRAGMENTS.length)] as string,
      );
      if (next() < 0.5) lines.unshift('*** Begin Patch');
      if (next() < 0.5) lines.push('*** End Patch');
      const text = lines.join(next() < 0.2 ? '\r\n' : '\n');
      let r: ReturnType<typeof parsePatch> | undefined;
      expect(() => (r = parsePatch(text)), text).not.toThrow();
      if (r && !r.ok) {
        expect(r.line, text).toBeGreaterThanOrEqual(1);
        expect(r.line, text).toBeLessThanOrEqual(text.split('\n').length);
        expect(r.message.length, text).toBeGreaterThan(10);
      }
    }
  });

  it('reads anchors, end-of-file, a missing @@, blank context and no-newline markers', () => {
    const r = parsePatch(
      [
        '*** Begin Patch',
        '*** Update File: src/a.py',
        ' first',
        '',
        '-old',
        '+new',
        '@@ def g():',
        '-x',
        '+y',
        '*** End of File',
        '*** Update File: b.txt',
        '*** Move to: c/b.txt',
        '@@ -3,2 +3,2 @@',
        '-last',
        '\\ No newline at end of file',
        '+last',
        '*** End Patch',
      ].join('\n'),
    );
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    const [a, b] = r.ops as [UpdateOp, UpdateOp];
    expect(a.hunks).toHaveLength(2);
    expect(a.hunks[0]).toMatchObject({ line: 3, eof: false });
    expect(a.hunks[0]!.anchor).toBeUndefined();
    expect(a.hunks[0]!.lines.map((l) => l.kind + l.text)).toEqual([' first', ' ', '-old', '+new']);
    expect(a.hunks[1]).toMatchObject({ line: 7, anchor: 'def g():', eof: true });
    expect(b).toMatchObject({ path: 'b.txt', moveTo: 'c/b.txt', moveLine: 12 });
    expect(b.hunks[0]).toMatchObject({ hint: 2, oldNoEol: true, newNoEol: false, eof: true });
  });

  it('reads git diffs: quoted paths, renames, new and deleted files, binary refused with its line', () => {
    const ok = parsePatch(
      [
        'diff --git "a/\\303\\251.txt" "b/\\303\\251.txt"',
        'new file mode 100644',
        'index 0000000..e69de29',
        'diff --git a/old.txt b/new.txt',
        'similarity index 100%',
        'rename from old.txt',
        'rename to new.txt',
      ].join('\n'),
    );
    expect(ok).toMatchObject({
      ok: true,
      format: 'unified',
      ops: [
        { kind: 'add', path: 'é.txt', lines: [] },
        { kind: 'update', path: 'old.txt', moveTo: 'new.txt', hunks: [] },
      ],
    });
    const bin = parsePatch(
      ['diff --git a/i.png b/i.png', 'index 1..2 100644', 'Binary files a/i.png and b/i.png differ'].join(
        '\n',
      ),
    );
    expect(bin).toMatchObject({ ok: false, line: 3 });
  });
});
