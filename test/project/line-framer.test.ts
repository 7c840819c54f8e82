// The one line framer (src/core/text/line-framer.ts) that the stdio transport and ripgrep's output parser share:
// lines across chunks, a character split between chunks, the byte limit for a whole and a growing line, stop.
import { describe, expect, it } from 'vitest';
import { LineFramer } from '../../src/core/text/line-framer.js';

function frame(chunks: (string | Buffer)[], max?: number, stopAfter?: number) {
  const out: string[] = [];
  const framer: LineFramer = new LineFramer(
    {
      onLine: (b) => {
        out.push(b.toString('utf8'));
        if (out.length === stopAfter) framer.stop();
      },
      onOversize: () => out.push('<oversize>'),
    },
    max,
  );
  for (const c of chunks) framer.push(Buffer.isBuffer(c) ? c : Buffer.from(c));
  framer.end();
  return out;
}

describe('LineFramer', () => {
  it('splits on newlines across chunks, keeps empty lines and a \\r, and ends with the unterminated rest', () => {
    expect(frame(['a\nb', 'c', 'd\n\ne\r\n', 'last'])).toEqual(['a', 'bcd', '', 'e\r', 'last']);
    expect(frame(['a\n'])).toEqual(['a']);
  });

  it('a multi-byte character split between chunks arrives whole', () => {
    const bytes = Buffer.from('é€\n');
    expect(frame([bytes.subarray(0, 1), bytes.subarray(1, 3), bytes.subarray(3)])).toEqual(['é€']);
  });

  it('a whole line over the limit is reported once and dropped; exactly the limit passes', () => {
    expect(frame(['12345\n123456\nok\n'], 5)).toEqual(['12345', '<oversize>', 'ok']);
  });

  it('a line growing over the limit is reported once, dropped up to its newline, and the next line is served', () => {
    expect(frame(['123', '456', '789', '0\nnext\n'], 5)).toEqual(['<oversize>', 'next']);
    expect(frame(['123', '4567'], 5)).toEqual(['<oversize>']);
  });

  it('after stop() no further line is delivered, not even the unterminated rest', () => {
    expect(frame(['a\nb\nc\n', 'd\ne'], undefined, 2)).toEqual(['a', 'b']);
  });
});
