// How text from outside the server is shown (src/core/text/visible-text.ts, docs/console.md#what-you-see-is-what-runs):
// the payloads that hid or reordered an approval's command, a file name or a client's name come out with every
// control, bidirectional and invisible format character as a mark, runs of spaces and line breaks counted, and a
// long text cut only around a mark that counts what it hides.
import { describe, expect, it } from 'vitest';
import {
  keepEnds,
  MAX_COMMAND_LINES,
  visibleText,
  type VisibleOptions,
} from '../../src/core/text/visible-text.js';

/** The parts with each mark in brackets, as a test can read them. */
function show(text: string, o: VisibleOptions): string {
  return visibleText(text, o)
    .parts.map((p) => (p.mark ? `[${p.text}]` : p.text))
    .join('');
}

const command = { mode: 'command', max: 3000 } as const;

describe('visibleText', () => {
  it('a command padded with 3,000 spaces shows its dangerous end, the spaces counted', () => {
    const cmd = `ls -la${' '.repeat(3000)}; rm -rf ./data`;
    expect(show(cmd, { mode: 'command', max: 4000 })).toBe('ls -la[␠ ×3,000]; rm -rf ./data');
    const cut = visibleText(cmd, { mode: 'command', max: 2000 });
    const text = cut.parts.map((p) => p.text).join('');
    expect(text).toContain('; rm -rf ./data');
    expect(text).toContain('1,021 characters hidden (3,021 in all)');
    expect(cut).toMatchObject({ length: 3021, hidden: 1021 });
  });

  it('a long command keeps its start and its end around a mark with the count', () => {
    const cmd = `echo ${'a'.repeat(5000)}; rm -rf ./data2`;
    const s = show(cmd, { mode: 'command', max: 100 });
    expect(s.startsWith(`echo ${'a'.repeat(45)}[ … 4,921 characters hidden (5,021 in all) … ]\n`)).toBe(true);
    expect(s.endsWith('; rm -rf ./data2')).toBe(true);
  });

  it('newlines are marked; a run of them is counted; too many lines keep the first and the last', () => {
    expect(show('ls\nrm -rf data', command)).toBe('ls[⏎]\nrm -rf data');
    expect(show(`ls${'\n'.repeat(60)}rm -rf data`, command)).toBe('ls[⏎ ×60]\nrm -rf data');
    const lines = Array.from({ length: 100 }, (_, i) => `echo ${i}`).join('\n');
    const s = show(lines, command);
    expect(s).toContain(`echo ${MAX_COMMAND_LINES / 2 - 1}[ … `);
    expect(s).not.toContain(`echo ${MAX_COMMAND_LINES / 2}[`);
    expect(s.endsWith('echo 99')).toBe(true);
    expect(s.split('\n')).toHaveLength(MAX_COMMAND_LINES);
  });

  it('bidirectional, zero-width, control and separator characters become escapes', () => {
    expect(show('true \u2067; rm -rf data #\u2069', command)).toBe('true [\\u2067]; rm -rf data #[\\u2069]');
    expect(show('dir/\u202Etxt.exe', { mode: 'line', max: 400 })).toBe('dir/[\\u202E]txt.exe');
    const all = '\u200B\u200C\u200D\u200E\u200F\u202A\u202B\u202C\u202D\u2066\u2068\u061C\uFEFF\u2028\u2029';
    expect(show(all, { mode: 'line', max: 400 })).toBe(
      [...all].map((c) => `[\\u${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}]`).join(''),
    );
    expect(show('a\u0000b\u001Bc\u007Fd\u0085e\u009Bf\tg\rh', { mode: 'line', max: 400 })).toBe(
      'a[\\u0000]b[\\u001B]c[\\u007F]d[\\u0085]e[\\u009B]f[\\t]g[\\r]h',
    );
    expect(show('x\uD800y\u{E0001}z', { mode: 'line', max: 400 })).toBe('x[\\uD800]y[\\u{E0001}]z');
  });

  it('a name never breaks a line: its newlines are escapes, a long one is cut with a mark', () => {
    const name = `Claude Code → claude.ai${'\n'.repeat(40)}.`;
    expect(show(name, { mode: 'line', max: 100 })).toBe('Claude Code → claude.ai[\\n ×40].');
    const long = visibleText('N'.repeat(500), { mode: 'line', max: 100 });
    expect(long.parts.map((p) => p.text).join('')).toContain('400 characters hidden (500 in all)');
  });

  it('output keeps its line breaks, tabs and indentation; a pair of surrogates is never split', () => {
    expect(show('a\tb\n        c\r\n', { mode: 'block', max: 100 })).toBe('a\tb\n        c[\\r]\n');
    const emoji = `${'😀'.repeat(10)}`;
    const parts = visibleText(emoji, { mode: 'line', max: 5 }).parts;
    for (const p of parts)
      expect(p.text).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/);
  });

  it('keepEnds keeps the start and the end, and the count of what it left out reaches the mark', () => {
    const k = keepEnds(`${'x'.repeat(10_000)}END`, 1000);
    expect(k).toMatchObject({ omitted: 9003 });
    expect(k.text).toHaveLength(1000);
    const s = show(k.text, { mode: 'command', max: 100, omitted: k.omitted });
    expect(s).toContain('9,903 characters hidden (10,003 in all)');
    expect(s.endsWith('END')).toBe(true);
    expect(keepEnds('short', 1000)).toEqual({ text: 'short', omitted: 0 });
  });
});
