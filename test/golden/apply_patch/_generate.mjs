#!/usr/bin/env node
// Writes the apply_patch golden scenarios (docs/design-notes.md#tests) as committed files:
// NNN_name/{patch.txt, input/, expected/ | expected_error.json} and optionally expected_result.json (a subset
// of structuredContent). The committed files are the oracle; this script only exists so their exact bytes
// (CRLF, BOM, \f, U+2028, U+0085, missing final newlines) can be reviewed as source. Run: node
// test/golden/apply_patch/_generate.mjs
import { chmodSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const scenarios = [];
const S = (name, spec) => scenarios.push({ name, ...spec });
const X = (content) => ({ content, mode: 0o755 });
const P = (...lines) => lines.join('\n') + '\n';
const env = (...body) => P('*** Begin Patch', ...body, '*** End Patch');

// ---- operations (docs/tools.md#editing-files: Add / Delete / Update / Move) ----
const greet = P('def greet(name):', '    print("Hi " + name)', '    return None', '', 'def main():', '    greet("world")');
S('001_update_single_hunk', {
  input: { 'greet.py': greet },
  patch: env('*** Update File: greet.py', '@@', ' def greet(name):', '-    print("Hi " + name)', '+    print(f"Hello, {name}!")', '     return None'),
  expected: { 'greet.py': greet.replace('print("Hi " + name)', 'print(f"Hello, {name}!")') },
  result: { fuzz: 0, additions: 1, removals: 1, summary: 'M greet.py', affected_files: [{ path: 'greet.py', operation: 'update' }] },
});
const ten = P(...Array.from({ length: 12 }, (_, i) => `line ${i + 1}`));
S('002_update_multiple_hunks', {
  input: { 'ten.txt': ten },
  patch: env('*** Update File: ten.txt', '@@', ' line 1', '-line 2', '+LINE 2', ' line 3', '@@', ' line 9', '-line 10', '+LINE 10', '+line 10.5', ' line 11'),
  expected: { 'ten.txt': ten.replace('line 2\n', 'LINE 2\n').replace('line 10\n', 'LINE 10\nline 10.5\n') },
  result: { additions: 3, removals: 2 },
});
S('003_add_file', {
  input: { 'keep.txt': 'keep\n' },
  patch: env('*** Add File: hello.txt', '+Hello', '+', '+world'),
  expected: { 'keep.txt': 'keep\n', 'hello.txt': 'Hello\n\nworld\n' },
  result: { summary: 'A hello.txt', additions: 3, removals: 0 },
});
S('004_add_file_creates_directories', {
  input: { 'keep.txt': 'keep\n' },
  patch: env('*** Add File: src/deep/nested/mod.ts', '+export const x = 1;'),
  expected: { 'keep.txt': 'keep\n', 'src/deep/nested/mod.ts': 'export const x = 1;\n' },
});
S('005_delete_file', {
  input: { 'gone.txt': 'a\nb\nc\n', 'stay.txt': 'stay\n' },
  patch: env('*** Delete File: gone.txt'),
  expected: { 'stay.txt': 'stay\n' },
  result: { summary: 'D gone.txt', removals: 3, additions: 0 },
});
S('006_move_file_unchanged', {
  input: { 'old/name.txt': 'content\n' },
  patch: env('*** Update File: old/name.txt', '*** Move to: new/name.txt'),
  expected: { 'new/name.txt': 'content\n', old: null },
  result: { summary: 'R old/name.txt -> new/name.txt', affected_files: [{ path: 'new/name.txt', operation: 'move', old_path: 'old/name.txt' }] },
});
S('007_move_with_changes_across_directories', {
  input: { 'a/b/util.js': P('export function add(a, b) {', '  return a + b;', '}') },
  patch: env('*** Update File: a/b/util.js', '*** Move to: lib/math/add.js', '@@', ' export function add(a, b) {', '-  return a + b;', '+  return Number(a) + Number(b);', ' }'),
  expected: { 'lib/math/add.js': P('export function add(a, b) {', '  return Number(a) + Number(b);', '}'), 'a/b': null },
});
S('008_all_operations_in_one_patch', {
  input: { 'm.txt': P('one', 'two', 'three'), 'd.txt': 'delete me\n', 'r.txt': P('rename', 'me') },
  patch: env(
    '*** Add File: a.txt', '+added',
    '*** Update File: m.txt', ' one', '-two', '+2', ' three',
    '*** Delete File: d.txt',
    '*** Update File: r.txt', '*** Move to: renamed/r.txt', '@@', '-rename', '+renamed', ' me',
  ),
  expected: { 'a.txt': 'added\n', 'm.txt': P('one', '2', 'three'), 'renamed/r.txt': P('renamed', 'me') },
  result: { summary: 'A a.txt\nM m.txt\nD d.txt\nR r.txt -> renamed/r.txt', additions: 3, removals: 3 },
});
S('009_add_empty_file', {
  input: {},
  patch: env('*** Add File: empty.txt'),
  expected: { 'empty.txt': '' },
});

// ---- leniencies (docs/tools.md#editing-files: lenient parsing) ----
const abc = P('alpha', 'beta', 'gamma');
const abcPatch = ['*** Update File: abc.txt', '@@', ' alpha', '-beta', '+BETA', ' gamma'];
S('010_markers_with_surrounding_whitespace', {
  input: { 'abc.txt': abc },
  patch: P('  *** Begin Patch  ', '*** Update File:   abc.txt  ', '@@   ', ' alpha', '-beta', '+BETA', ' gamma', '\t*** End Patch\t'),
  expected: { 'abc.txt': P('alpha', 'BETA', 'gamma') },
});
S('011_heredoc_wrapper_quoted', {
  input: { 'abc.txt': abc },
  patch: P("<<'EOF'", '*** Begin Patch', ...abcPatch, '*** End Patch', 'EOF'),
  expected: { 'abc.txt': P('alpha', 'BETA', 'gamma') },
});
S('012_heredoc_wrapper_with_command', {
  input: { 'abc.txt': abc },
  patch: P('apply_patch <<"PATCH"', '*** Begin Patch', ...abcPatch, '*** End Patch', 'PATCH'),
  expected: { 'abc.txt': P('alpha', 'BETA', 'gamma') },
});
S('019_heredoc_wrapper_unquoted', {
  input: { 'abc.txt': abc },
  patch: P('<<EOF', '*** Begin Patch', ...abcPatch, '*** End Patch', 'EOF'),
  expected: { 'abc.txt': P('alpha', 'BETA', 'gamma') },
});
S('013_empty_line_is_empty_context', {
  input: { 'gap.txt': P('first', '', 'second', 'third') },
  patch: env('*** Update File: gap.txt', '@@', ' first', '', '-second', '+SECOND', ' third'),
  expected: { 'gap.txt': P('first', '', 'SECOND', 'third') },
});
S('014_first_hunk_without_at_at', {
  input: { 'abc.txt': abc },
  patch: env('*** Update File: abc.txt', ' alpha', '-beta', '+BETA', ' gamma'),
  expected: { 'abc.txt': P('alpha', 'BETA', 'gamma') },
});
S('015_patch_text_with_crlf', {
  input: { 'abc.txt': abc },
  patch: Buffer.from(env(...abcPatch).replace(/\n/g, '\r\n')),
  expected: { 'abc.txt': P('alpha', 'BETA', 'gamma') },
});
S('016_markdown_fence_wrapper', {
  input: { 'abc.txt': abc },
  patch: P('```diff', '*** Begin Patch', ...abcPatch, '*** End Patch', '```'),
  expected: { 'abc.txt': P('alpha', 'BETA', 'gamma') },
});
S('017_two_update_sections_for_one_file', {
  input: { 'ten.txt': ten },
  patch: env('*** Update File: ten.txt', '@@', '-line 1', '+LINE 1', ' line 2', '', '*** Update File: ten.txt', '@@', ' line 11', '-line 12', '+LINE 12'),
  expected: { 'ten.txt': ten.replace('line 1\n', 'LINE 1\n').replace('line 12\n', 'LINE 12\n') },
  result: { summary: 'M ten.txt' },
});
S('018_blank_separator_lines_between_files', {
  input: { 'abc.txt': abc, 'x.txt': 'x\n' },
  patch: P('*** Begin Patch', '', ...abcPatch, '', '', '*** Update File: x.txt', '-x', '+y', '', '*** End Patch', ''),
  expected: { 'abc.txt': P('alpha', 'BETA', 'gamma'), 'x.txt': 'y\n' },
});

// ---- fuzz tiers (docs/tools.md#editing-files: Matching) ----
S('020_fuzz1_trailing_whitespace', {
  input: { 'ws.txt': P('keep   ', 'change me  ', 'end\t') },
  patch: env('*** Update File: ws.txt', ' keep', '-change me', '+changed', ' end'),
  expected: { 'ws.txt': P('keep   ', 'changed', 'end\t') },
  result: { fuzz: 1 },
});
S('021_fuzz2_indentation', {
  input: { 'ind.py': P('def f():', '    if x:', '        return 1', '    return 2') },
  patch: env('*** Update File: ind.py', ' if x:', '-    return 1', '+        return 10', ' return 2'),
  expected: { 'ind.py': P('def f():', '    if x:', '        return 10', '    return 2') },
  result: { fuzz: 2 },
});
S('022_fuzz3_unicode_punctuation', {
  input: { 'doc.md': P('Title — “quoted” text', 'It’s a\u00a0test', 'last line') },
  patch: env('*** Update File: doc.md', ' Title - "quoted" text', "-It's a test", '+It is a test', ' last line'),
  expected: { 'doc.md': P('Title — “quoted” text', 'It is a test', 'last line') },
  result: { fuzz: 3 },
});
S('023_exact_match_preferred_over_fuzzy', {
  input: { 'twice.txt': P('value = 1  ', 'x', 'value = 1', 'y') },
  patch: env('*** Update File: twice.txt', '-value = 1', '+value = 2'),
  expected: { 'twice.txt': P('value = 1  ', 'x', 'value = 2', 'y') },
  result: { fuzz: 0 },
});

// ---- anchors, end of file, pure insertion ----
const twoFns = P('function a() {', '  let n = 0;', '  return n;', '}', '', 'function b() {', '  let n = 0;', '  return n;', '}');
S('030_anchor_disambiguates', {
  input: { 'fns.js': twoFns },
  patch: env('*** Update File: fns.js', '@@ function b() {', '-  let n = 0;', '+  let n = 42;', '   return n;'),
  expected: { 'fns.js': P('function a() {', '  let n = 0;', '  return n;', '}', '', 'function b() {', '  let n = 42;', '  return n;', '}') },
});
S('031_anchor_partial_line_text', {
  input: { 'fns.js': twoFns },
  patch: env('*** Update File: fns.js', '@@ function b', '-  return n;', '+  return n + 1;'),
  expected: { 'fns.js': P('function a() {', '  let n = 0;', '  return n;', '}', '', 'function b() {', '  let n = 0;', '  return n + 1;', '}') },
});
S('032_end_of_file_anchor', {
  input: { 'end.txt': P('}', 'middle', '}') },
  patch: env('*** Update File: end.txt', '@@', '-}', '+} // end', '*** End of File'),
  expected: { 'end.txt': P('}', 'middle', '} // end') },
});
S('036_end_of_file_before_trailing_blank_lines', {
  input: { 'end.txt': P('}', 'middle', '}', '', '') },
  patch: env('*** Update File: end.txt', '@@', '-}', '+} // end', '*** End of File'),
  expected: { 'end.txt': P('}', 'middle', '} // end', '', '') },
});
S('033_pure_insertion_after_anchor', {
  input: { 'list.txt': P('[fruits]', 'apple', '[vegetables]', 'carrot') },
  patch: env('*** Update File: list.txt', '@@ [vegetables]', '+beet'),
  expected: { 'list.txt': P('[fruits]', 'apple', '[vegetables]', 'beet', 'carrot') },
});
S('034_pure_insertion_at_end_without_anchor', {
  input: { 'log.txt': P('one', 'two') },
  patch: env('*** Update File: log.txt', '@@', '+three', '+four'),
  expected: { 'log.txt': P('one', 'two', 'three', 'four') },
});
S('035_sequential_anchors_walk_down', {
  input: { 'cfg.ini': P('[a]', 'x=1', '[b]', 'x=1', '[c]', 'x=1') },
  patch: env('*** Update File: cfg.ini', '@@ [b]', '-x=1', '+x=2', '@@ [c]', '-x=1', '+x=3'),
  expected: { 'cfg.ini': P('[a]', 'x=1', '[b]', 'x=2', '[c]', 'x=3') },
});

// ---- bytes: line endings, BOM, unusual characters, final newline ----
S('040_crlf_file_stays_crlf', {
  input: { 'win.txt': 'one\r\ntwo\r\nthree\r\n' },
  patch: env('*** Update File: win.txt', ' one', '-two', '+TWO', '+two and a half', ' three'),
  expected: { 'win.txt': 'one\r\nTWO\r\ntwo and a half\r\nthree\r\n' },
});
S('041_bom_preserved', {
  input: { 'bom.txt': '\ufefffirst\nsecond\n' },
  patch: env('*** Update File: bom.txt', ' first', '-second', '+SECOND'),
  expected: { 'bom.txt': '\ufefffirst\nSECOND\n' },
});
S('042_bom_and_crlf_together', {
  input: { 'both.cs': '\ufeffusing System;\r\nclass A {}\r\n' },
  patch: env('*** Update File: both.cs', '@@', '-using System;', '+using System;', '+using System.IO;', ' class A {}'),
  expected: { 'both.cs': '\ufeffusing System;\r\nusing System.IO;\r\nclass A {}\r\n' },
});
S('043_mixed_line_endings_kept_per_line', {
  input: { 'mixed.txt': 'a\r\nb\nc\r\nd\r\n' },
  patch: env('*** Update File: mixed.txt', ' b', '-c', '+C', ' d'),
  expected: { 'mixed.txt': 'a\r\nb\nC\r\nd\r\n' },
});
S('044_formfeed_u2028_nel_are_not_line_breaks', {
  input: { 'odd.txt': 'page one\fpage two\nsep\u2028arated\nnext\u0085line\nplain\n' },
  patch: env('*** Update File: odd.txt', ' page one\fpage two', '-sep\u2028arated', '+joined', ' next\u0085line', ' plain'),
  expected: { 'odd.txt': 'page one\fpage two\njoined\nnext\u0085line\nplain\n' },
});
S('045_no_final_newline_kept', {
  input: { 'noeol.txt': 'one\ntwo\nthree' },
  patch: env('*** Update File: noeol.txt', ' one', '-two', '+TWO', ' three'),
  expected: { 'noeol.txt': 'one\nTWO\nthree' },
});
S('046_add_final_newline', {
  input: { 'noeol.txt': 'one\ntwo' },
  patch: env('*** Update File: noeol.txt', ' one', '-two', '\\ No newline at end of file', '+two'),
  expected: { 'noeol.txt': 'one\ntwo\n' },
});
S('047_remove_final_newline', {
  input: { 'eol.txt': 'one\ntwo\n' },
  patch: env('*** Update File: eol.txt', ' one', '-two', '+two', '\\ No newline at end of file'),
  expected: { 'eol.txt': 'one\ntwo' },
});
S('048_append_to_file_without_final_newline', {
  input: { 'noeol.txt': 'one\ntwo' },
  patch: env('*** Update File: noeol.txt', ' two', '+three', '*** End of File'),
  expected: { 'noeol.txt': 'one\ntwo\nthree' },
});
S('049_add_file_without_final_newline', {
  input: {},
  patch: env('*** Add File: raw.txt', '+no newline here', '\\ No newline at end of file'),
  expected: { 'raw.txt': 'no newline here' },
});
S('050_unicode_paths', {
  input: { 'données/été.txt': 'chaud\n' },
  patch: env('*** Update File: données/été.txt', '-chaud', '+très chaud', '*** Add File: 日本/文件.md', '+# 你好'),
  expected: { 'données/été.txt': 'très chaud\n', '日本/文件.md': '# 你好\n' },
});
S('051_exec_mode_preserved_on_update_and_move', {
  input: { 'run.sh': X(P('#!/bin/sh', 'echo hi')), 'tool.sh': X(P('#!/bin/sh', 'echo tool')) },
  patch: env('*** Update File: run.sh', ' #!/bin/sh', '-echo hi', '+echo hello', '*** Update File: tool.sh', '*** Move to: bin/tool.sh'),
  expected: { 'run.sh': X(P('#!/bin/sh', 'echo hello')), 'bin/tool.sh': X(P('#!/bin/sh', 'echo tool')) },
});
S('052_delete_last_lines_to_empty_file', {
  input: { 'short.txt': 'only\n' },
  patch: env('*** Update File: short.txt', '-only'),
  expected: { 'short.txt': '' },
});

// ---- unified diffs as git prints them (docs/tools.md#editing-files, **beyond**) ----
S('060_unified_git_diff_update', {
  input: { 'ten.txt': ten },
  patch: P(
    'diff --git a/ten.txt b/ten.txt', 'index 3b18e51..a8d2f1c 100644', '--- a/ten.txt', '+++ b/ten.txt',
    '@@ -1,4 +1,4 @@', ' line 1', '-line 2', '+LINE 2', ' line 3', ' line 4',
    '@@ -9,4 +9,5 @@ some heading', ' line 9', ' line 10', '+line 10.5', ' line 11', ' line 12',
  ),
  expected: { 'ten.txt': ten.replace('line 2\n', 'LINE 2\n').replace('line 10\n', 'line 10\nline 10.5\n') },
  result: { additions: 2, removals: 1 },
});
S('061_unified_new_file', {
  input: {},
  patch: P('diff --git a/new.txt b/new.txt', 'new file mode 100644', 'index 0000000..3b18e51', '--- /dev/null', '+++ b/new.txt', '@@ -0,0 +1,2 @@', '+hello', '+world'),
  expected: { 'new.txt': P('hello', 'world') },
  result: { summary: 'A new.txt' },
});
S('062_unified_delete_file', {
  input: { 'old.txt': P('bye', 'now'), 'keep.txt': 'k\n' },
  patch: P('diff --git a/old.txt b/old.txt', 'deleted file mode 100644', 'index 3b18e51..0000000', '--- a/old.txt', '+++ /dev/null', '@@ -1,2 +0,0 @@', '-bye', '-now'),
  expected: { 'keep.txt': 'k\n' },
  result: { summary: 'D old.txt' },
});
S('063_unified_rename_with_changes', {
  input: { 'src/old.js': P('const a = 1;', 'const b = 2;', 'export { a, b };') },
  patch: P(
    'diff --git a/src/old.js b/lib/new.js', 'similarity index 80%', 'rename from src/old.js', 'rename to lib/new.js', 'index 1111111..2222222 100644',
    '--- a/src/old.js', '+++ b/lib/new.js', '@@ -1,3 +1,3 @@', ' const a = 1;', '-const b = 2;', '+const b = 3;', ' export { a, b };',
  ),
  expected: { 'lib/new.js': P('const a = 1;', 'const b = 3;', 'export { a, b };'), src: null },
  result: { summary: 'R src/old.js -> lib/new.js' },
});
S('064_unified_pure_rename', {
  input: { 'a.txt': 'same\n' },
  patch: P('diff --git a/a.txt b/b.txt', 'similarity index 100%', 'rename from a.txt', 'rename to b.txt'),
  expected: { 'b.txt': 'same\n' },
});
S('065_unified_quoted_unicode_path', {
  input: { 'été.txt': 'chaud\n' },
  patch: P('diff --git "a/\\303\\251t\\303\\251.txt" "b/\\303\\251t\\303\\251.txt"', 'index 1..2 100644', '--- "a/\\303\\251t\\303\\251.txt"', '+++ "b/\\303\\251t\\303\\251.txt"', '@@ -1 +1 @@', '-chaud', '+froid'),
  expected: { 'été.txt': 'froid\n' },
});
S('066_unified_no_newline_markers', {
  input: { 'n.txt': 'a\nb' },
  patch: P('--- a/n.txt', '+++ b/n.txt', '@@ -1,2 +1,3 @@', ' a', '-b', '\\ No newline at end of file', '+b', '+c', '\\ No newline at end of file'),
  expected: { 'n.txt': 'a\nb\nc' },
});
S('067_unified_wrong_counts_tolerated', {
  input: { 'abc.txt': abc },
  patch: P('--- a/abc.txt', '+++ b/abc.txt', '@@ -1,2 +1,2 @@', ' alpha', '-beta', '+BETA', ' gamma'),
  expected: { 'abc.txt': P('alpha', 'BETA', 'gamma') },
});
S('068_unified_diff_u_with_timestamps', {
  input: { 'plain.txt': abc },
  patch: P('--- plain.txt\t2024-01-01 10:00:00.000000000 +0000', '+++ plain.txt\t2024-01-02 10:00:00.000000000 +0000', '@@ -1,3 +1,3 @@', ' alpha', '-beta', '+BETA', ' gamma'),
  expected: { 'plain.txt': P('alpha', 'BETA', 'gamma') },
});
const dup = P('x', 'same', 'y', 'x', 'same', 'y');
S('069_unified_line_number_picks_between_equal_regions', {
  input: { 'dup.txt': dup },
  patch: P('--- a/dup.txt', '+++ b/dup.txt', '@@ -4,3 +4,3 @@', ' x', '-same', '+changed', ' y'),
  expected: { 'dup.txt': P('x', 'same', 'y', 'x', 'changed', 'y') },
});
S('070_unified_multiple_files', {
  input: { 'a.txt': 'a\n', 'b.txt': 'b\n' },
  patch: P('diff --git a/a.txt b/a.txt', '--- a/a.txt', '+++ b/a.txt', '@@ -1 +1 @@', '-a', '+A', 'diff --git a/b.txt b/b.txt', '--- a/b.txt', '+++ b/b.txt', '@@ -1 +1 @@', '-b', '+B'),
  expected: { 'a.txt': 'A\n', 'b.txt': 'B\n' },
  result: { summary: 'M a.txt\nM b.txt' },
});

// ---- errors: the tree stays unchanged (docs/design-notes.md#tests) ----
S('100_error_context_not_found', {
  input: { 'abc.txt': abc },
  patch: env('*** Update File: abc.txt', '@@', ' alpha', '-delta', '+DELTA'),
  error: { code: 'PATCH_CONTEXT_NOT_FOUND', line: 3 },
});
S('101_error_context_ambiguous', {
  input: { 'dup.txt': dup },
  patch: env('*** Update File: dup.txt', ' x', '-same', '+changed', ' y'),
  error: { code: 'PATCH_CONTEXT_AMBIGUOUS', line: 3 },
});
S('102_error_hunks_overlap', {
  input: { 'ten.txt': ten },
  patch: env('*** Update File: ten.txt', '@@', ' line 3', '-line 4', '+LINE 4', ' line 5', '@@', ' line 2', '-line 3', '+LINE 3', ' line 4'),
  error: { code: 'PATCH_HUNKS_OVERLAP', line: 8 },
});
S('103_error_already_applied', {
  input: { 'abc.txt': P('alpha', 'BETA', 'gamma') },
  patch: env(...abcPatch),
  error: { code: 'PATCH_ALREADY_APPLIED', line: 3 },
});
S('104_error_add_existing_file', {
  input: { 'abc.txt': abc },
  patch: env('*** Add File: abc.txt', '+new'),
  error: { code: 'PATCH_FAILED', line: 2 },
});
S('105_error_update_missing_file', {
  input: { 'abc.txt': abc },
  patch: env('*** Update File: nope.txt', '-a', '+b'),
  error: { code: 'PATCH_FAILED', line: 2 },
});
S('106_error_delete_missing_file', {
  input: { 'abc.txt': abc },
  patch: env('*** Delete File: nope.txt'),
  error: { code: 'PATCH_FAILED', line: 2 },
});
S('107_error_delete_directory', {
  input: { 'dir/inside.txt': 'x\n' },
  patch: env('*** Delete File: dir'),
  error: { code: 'PATCH_FAILED', line: 2 },
});
S('108_error_move_onto_existing_file', {
  input: { 'a.txt': 'a\n', 'b.txt': 'b\n' },
  patch: env('*** Update File: a.txt', '*** Move to: b.txt'),
  error: { code: 'PATCH_FAILED', line: 3 },
});
S('109_error_second_file_fails_first_untouched', {
  input: { 'abc.txt': abc, 'x.txt': 'x\n' },
  patch: env(...abcPatch, '*** Update File: x.txt', '-not there', '+y'),
  error: { code: 'PATCH_CONTEXT_NOT_FOUND', line: 9 },
});
S('110_error_end_of_file_lines_not_at_end', {
  input: { 'end.txt': P('target', 'after') },
  patch: env('*** Update File: end.txt', '-target', '+changed', '*** End of File'),
  error: { code: 'PATCH_CONTEXT_NOT_FOUND', line: 3 },
});
S('111_error_anchor_not_found', {
  input: { 'fns.js': twoFns },
  patch: env('*** Update File: fns.js', '@@ function zzz() {', '-  let n = 0;', '+  let n = 1;'),
  error: { code: 'PATCH_CONTEXT_NOT_FOUND', line: 3 },
});
S('112_error_binary_file', {
  input: { 'bin.dat': Buffer.from([0x61, 0x00, 0x62, 0x0a]) },
  patch: env('*** Update File: bin.dat', '-a', '+b'),
  error: { code: 'BINARY_FILE' },
});
S('113_error_invalid_utf8', {
  input: { 'latin1.txt': Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]) },
  patch: env('*** Update File: latin1.txt', '-café', '+cafe'),
  error: { code: 'UNSUPPORTED_ENCODING' },
});
S('114_error_path_outside_workspace', {
  input: { 'abc.txt': abc },
  patch: env('*** Add File: ../escape.txt', '+x'),
  error: { code: 'PATH_OUTSIDE_WORKSPACE', line: 2 },
});
S('115_error_absolute_path_outside_workspace', {
  input: { 'abc.txt': abc },
  patch: env('*** Update File: abc.txt', ' alpha', '*** Delete File: /etc/hostname'),
  error: { code: 'PATH_OUTSIDE_WORKSPACE', line: 4 },
});
S('116_error_same_file_twice', {
  input: { 'abc.txt': abc },
  patch: env('*** Delete File: abc.txt', '*** Add File: abc.txt', '+new'),
  error: { code: 'INVALID_ARGUMENT', line: 3 },
});

// ---- parse errors carry the line number ----
S('120_parse_error_missing_begin', {
  input: { 'abc.txt': abc },
  patch: P(...abcPatch, '*** End Patch'),
  error: { code: 'INVALID_ARGUMENT', line: 1 },
});
S('121_parse_error_missing_end', {
  input: { 'abc.txt': abc },
  patch: P('*** Begin Patch', ...abcPatch),
  error: { code: 'INVALID_ARGUMENT', line: 7 },
});
S('122_parse_error_hunk_line_without_prefix', {
  input: { 'abc.txt': abc },
  patch: env('*** Update File: abc.txt', '@@', ' alpha', 'beta', '+BETA'),
  error: { code: 'INVALID_ARGUMENT', line: 5 },
});
S('123_parse_error_add_line_without_plus', {
  input: {},
  patch: env('*** Add File: new.txt', '+one', 'two'),
  error: { code: 'INVALID_ARGUMENT', line: 4 },
});
S('124_parse_error_unknown_marker', {
  input: { 'abc.txt': abc },
  patch: env('*** Rename File: abc.txt'),
  error: { code: 'INVALID_ARGUMENT', line: 2 },
});
S('125_parse_error_update_without_hunks', {
  input: { 'abc.txt': abc },
  patch: env('*** Update File: abc.txt', '*** Delete File: other.txt'),
  error: { code: 'INVALID_ARGUMENT', line: 2 },
});
S('126_parse_error_text_after_end', {
  input: { 'abc.txt': abc },
  patch: P('*** Begin Patch', ...abcPatch, '*** End Patch', 'trailing words'),
  error: { code: 'INVALID_ARGUMENT', line: 9 },
});
S('127_parse_error_line_counts_heredoc_line', {
  input: { 'abc.txt': abc },
  patch: P("<<'EOF'", '*** Begin Patch', '*** Update File: abc.txt', '@@', '~ alpha', '*** End Patch', 'EOF'),
  error: { code: 'INVALID_ARGUMENT', line: 5 },
});
S('128_parse_error_unified_malformed_hunk_header', {
  input: { 'abc.txt': abc },
  patch: P('--- a/abc.txt', '+++ b/abc.txt', '@@ -x +y @@', '-beta', '+BETA'),
  error: { code: 'INVALID_ARGUMENT', line: 3 },
});
S('129_parse_error_empty_patch_envelope', {
  input: { 'abc.txt': abc },
  patch: P('*** Begin Patch', '*** End Patch'),
  error: { code: 'INVALID_ARGUMENT', line: 2 },
});
S('130_parse_error_move_without_update', {
  input: { 'abc.txt': abc },
  patch: env('*** Update File: abc.txt', '@@', '-beta', '+BETA', '*** Move to: x.txt'),
  error: { code: 'INVALID_ARGUMENT', line: 6 },
});

// ---------------------------------------------------------------------------------------------------------

function writeTree(dir, tree) {
  mkdirSync(dir, { recursive: true });
  for (const [rel, v] of Object.entries(tree)) {
    if (v === null) continue; // "must not exist": only meaningful in expected/, checked by the tree compare
    const file = path.join(dir, rel);
    mkdirSync(path.dirname(file), { recursive: true });
    const entry = typeof v === 'string' || Buffer.isBuffer(v) ? { content: v, mode: 0o644 } : v;
    writeFileSync(file, entry.content);
    chmodSync(file, entry.mode);
  }
}

for (const name of readdirSync(HERE)) {
  if (/^\d{3}_/.test(name)) rmSync(path.join(HERE, name), { recursive: true, force: true });
}
for (const s of scenarios) {
  const dir = path.join(HERE, s.name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'patch.txt'), s.patch);
  writeTree(path.join(dir, 'input'), s.input);
  // git keeps no empty directories; a .keep marks an empty tree and is ignored by the runner.
  if (Object.keys(s.input).length === 0) writeFileSync(path.join(dir, 'input', '.keep'), '');
  if (s.error) writeFileSync(path.join(dir, 'expected_error.json'), JSON.stringify(s.error, null, 2) + '\n');
  else {
    writeTree(path.join(dir, 'expected'), s.expected);
    if (Object.values(s.expected).every((v) => v === null)) writeFileSync(path.join(dir, 'expected', '.keep'), '');
  }
  if (s.result) writeFileSync(path.join(dir, 'expected_result.json'), JSON.stringify(s.result, null, 2) + '\n');
}
console.log(`${scenarios.length} scenarios written`);
