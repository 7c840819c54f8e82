// Output buffers and their model-facing views (docs/tools.md#commands: output budget, read_output paging,
// ANSI stripped from model-facing text only). Pure: no processes.
import { describe, expect, it } from 'vitest';
import { HEAD_BYTES, modelText, StreamBuffer } from '../../src/process/commands/output.js';
import { readPage, viewNew } from '../../src/tools/exec/view.js';

const REF = 'command:X:stdout';

function filled(n: number, tail = 1000, chunk = 777): { buf: StreamBuffer; data: Buffer } {
  const data = Buffer.from(Array.from({ length: n }, (_, i) => String.fromCharCode(97 + (i % 26))).join(''));
  const buf = new StreamBuffer(tail);
  for (let i = 0; i < n; i += chunk) buf.append(data.subarray(i, i + chunk));
  return { buf, data };
}

describe('StreamBuffer: frozen head, rolling tail, absolute offsets', () => {
  it('keeps the first 64 KiB and the last tailCap bytes, counting what was dropped', () => {
    const { buf, data } = filled(HEAD_BYTES + 5000, 1000);
    expect(buf.total).toBe(HEAD_BYTES + 5000);
    expect(buf.headEnd).toBe(HEAD_BYTES);
    expect(buf.tailStart).toBe(HEAD_BYTES + 4000);
    expect(buf.droppedBytes).toBe(4000);
    expect(buf.retainedBytes).toBe(HEAD_BYTES + 1000);
    expect(buf.read(0, 10).equals(data.subarray(0, 10))).toBe(true);
    expect(buf.read(buf.tailStart, buf.total).equals(data.subarray(-1000))).toBe(true);
    expect(buf.retainedSpans(10, buf.total)).toEqual([
      { start: 10, end: HEAD_BYTES },
      { start: HEAD_BYTES + 4000, end: HEAD_BYTES + 5000 },
    ]);
  });

  it('small output is one contiguous span', () => {
    const { buf } = filled(100);
    expect(buf.retainedSpans(0, 100)).toEqual([{ start: 0, end: 100 }]);
    expect(buf.droppedBytes).toBe(0);
  });
});

describe('viewNew: head and tail within the budget, a marker with the exact read_output call', () => {
  it('shows everything that fits', () => {
    const { buf } = filled(300);
    expect(viewNew(buf, REF, 0, 300, 1000, 4096)).toMatchObject({ omitted: 0, readFrom: null });
  });

  it('keeps half the budget from each end and names the left-out bytes', () => {
    const { buf, data } = filled(10_000, 100_000);
    const v = viewNew(buf, REF, 0, 10_000, 1000, 4096);
    expect(v.omitted).toBe(9000);
    expect(v.readFrom).toBe(500);
    expect(v.text.startsWith(data.subarray(0, 500).toString())).toBe(true);
    expect(v.text.endsWith(data.subarray(-500).toString())).toBe(true);
    expect(v.text).toContain(
      `[… 9,000 bytes left out here; page them with read_output {"output_ref":"${REF}","offset":500,"limit":4096} …]`,
    );
  });

  it('says which left-out bytes are no longer kept', () => {
    const { buf } = filled(HEAD_BYTES + 50_000, 10_000);
    const v = viewNew(buf, REF, 0, buf.total, 2000, 4096);
    expect(v.text).toMatch(/bytes left out here \(40,000 of them no longer kept\)/);
  });

  it('never cuts a UTF-8 character', () => {
    const buf = new StreamBuffer(100_000);
    const s = 'é'.repeat(5000); // 2 bytes each
    buf.append(Buffer.from(s));
    const v = viewNew(buf, REF, 0, buf.total, 1001, 4096);
    expect(v.text).not.toContain('\uFFFD');
    expect((v.text.match(/é/g) ?? []).length * 2 + v.omitted).toBe(buf.total);
  });
});

describe('readPage: paging across the dropped middle', () => {
  it('stops at the end of the head, then skips to the tail and reports the skip', () => {
    const { buf, data } = filled(HEAD_BYTES + 5000, 1000);
    const a = readPage(buf, HEAD_BYTES - 10, 4096);
    expect(a).toMatchObject({ offset: HEAD_BYTES - 10, end: HEAD_BYTES, skipped: 0 });
    const b = readPage(buf, a.end, 4096);
    expect(b).toMatchObject({ offset: HEAD_BYTES + 4000, end: HEAD_BYTES + 5000, skipped: 4000 });
    expect(b.content).toBe(data.subarray(-1000).toString());
  });

  it('keeps pages on character boundaries', () => {
    const buf = new StreamBuffer(100_000);
    buf.append(Buffer.from('aé€😀b'));
    const p1 = readPage(buf, 0, 2);
    expect(p1).toMatchObject({ content: 'a', end: 1 });
    const p2 = readPage(buf, 2, 3); // starts inside é: moves to €
    expect(p2).toMatchObject({ offset: 3, content: '€', end: 6 });
  });
});

describe('modelText (ANSI escapes stripped from model-facing text only)', () => {
  it.each([
    ['\x1b[1;31mred\x1b[0m', 'red'],
    ['a\r\nb\r\n', 'a\nb\n'],
    ['10%\r50%\r100%\ndone', '100%\ndone'],
    ['\x1b]0;title\x07prompt$ ', 'prompt$ '],
    ['abc\b\bX', 'aX'],
    ['bell\x07 and nul\x00', 'bell and nul'],
  ])('%j → %j', (raw, want) => {
    expect(modelText(raw)).toBe(want);
  });
});

describe('modelText folds runs of Node-internal stack frames (docs/tools.md#commands, docs/design-notes.md#lean-results)', () => {
  const stack = [
    'AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:',
    '    at Object.<anonymous> (/w/test/math.test.js:6:8)',
    '    at Module._compile (node:internal/modules/cjs/loader:1521:14)',
    '    at Module._extensions..js (node:internal/modules/cjs/loader:1623:10)',
    '    at Function.executeUserEntryPoint [as runMain] (node:internal/modules/run_main:164:12)',
    '    at node:internal/main/run_main_module:28:49 {',
    "  code: 'ERR_ASSERTION',",
    '}',
  ].join('\r\n');

  it("keeps the program's own frame and the error, folds the four internal ones and keeps the brace", () => {
    expect(modelText(stack).split('\n')).toEqual([
      'AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:',
      '    at Object.<anonymous> (/w/test/math.test.js:6:8)',
      '    at … 4 frames in node:internal {',
      "  code: 'ERR_ASSERTION',",
      '}',
    ]);
  });

  it('leaves a single internal frame, frames of user code between them, and look-alike lines as they are', () => {
    const raw = [
      '    at a (node:internal/x:1:1)',
      '    at b (/w/b.js:1:1)',
      '    at c (node:internal/y:2:2)',
      'at d (node:internal/z:3:3)',
      '    at e (node:internal/z:3:3) trailing',
      '    at f (node:internal/z:4:4)',
    ].join('\n');
    expect(modelText(raw)).toBe(raw);
  });

  it('ends a run at a frame followed by " {" so two errors\' stacks fold separately', () => {
    const raw = [
      '    at a (node:internal/x:1:1)',
      '    at node:internal/x:2:2 {',
      '    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)',
      '    at async Promise.all (index 0)',
      '    at b (node:internal/x:3:3)',
      '    at c (node:internal/x:4:4)',
    ].join('\n');
    expect(modelText(raw).split('\n')).toEqual([
      '    at … 2 frames in node:internal {',
      '    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)',
      '    at async Promise.all (index 0)',
      '    at … 2 frames in node:internal',
    ]);
  });
});
