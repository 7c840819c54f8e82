#!/usr/bin/env node
// Writes the edit_file golden scenarios as committed files: NNN_name/{args.json, input/, expected/ |
// expected_error.json}, optionally expected_result.json (a subset of structuredContent plus the text) and
// setup.json (symlinks the runner makes, "{outside}" naming a directory outside the workspace). The committed
// files are the oracle; this script only exists so their exact bytes (CRLF, lone CR, BOM, typographic
// punctuation, Latin-1) can be reviewed as source. Run: node test/golden/edit_file/_generate.mjs
import { chmodSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const scenarios = [];
const S = (name, spec) => scenarios.push({ name, ...spec });
const P = (...lines) => lines.join('\n') + '\n';
const update = (file, text, additions, removals, extra = {}) => ({
  affected_files: [{ path: file, operation: 'update' }],
  additions,
  removals,
  text,
  ...extra,
});

// ---- replacements (README "Editing files": exact, once, or every place with replace_all) ----
const greet = P('def greet(name):', '    print("Hi " + name)', '    return None', '', 'def main():', '    greet("world")');
S('001_exact_one_line', {
  input: { 'greet.py': greet },
  args: { path: 'greet.py', old_string: '    print("Hi " + name)', new_string: '    print(f"Hello, {name}!")' },
  expected: { 'greet.py': greet.replace('print("Hi " + name)', 'print(f"Hello, {name}!")') },
  result: update('greet.py', 'Edited greet.py (+1 -1).', 1, 1),
});
S('002_exact_several_lines', {
  input: { 'greet.py': greet },
  args: {
    path: 'greet.py',
    old_string: '    print("Hi " + name)\n    return None\n',
    new_string: '    message = f"Hello, {name}!"\n    print(message)\n    return message\n',
  },
  expected: {
    'greet.py': P('def greet(name):', '    message = f"Hello, {name}!"', '    print(message)', '    return message', '', 'def main():', '    greet("world")'),
  },
  result: update('greet.py', 'Edited greet.py (+3 -2).', 3, 2),
});
const math = P('function add(a, b) {', '  return a - b;', '}');
S('003_part_of_a_line', {
  input: { 'src/math.js': math },
  args: { path: 'src/math.js', old_string: 'a - b', new_string: 'a + b' },
  expected: { 'src/math.js': math.replace('a - b', 'a + b') },
  result: update('src/math.js', 'Edited src/math.js (+1 -1).', 1, 1),
});
const foo = P('foo = 1', 'bar(foo)', 'foo + foo', 'done');
S('004_replace_all', {
  input: { 'foo.py': foo },
  args: { path: 'foo.py', old_string: 'foo', new_string: 'qux', replace_all: true },
  expected: { 'foo.py': foo.replaceAll('foo', 'qux') },
  result: update('foo.py', 'Edited foo.py: 4 replacements (+3 -3).', 3, 3),
});
S('005_replace_all_with_one_occurrence', {
  input: { 'src/math.js': math },
  args: { path: 'src/math.js', old_string: 'a - b', new_string: 'a + b', replace_all: true },
  expected: { 'src/math.js': math.replace('a - b', 'a + b') },
  result: update('src/math.js', 'Edited src/math.js (+1 -1).', 1, 1),
});
S('006_delete_a_line', {
  input: { 'list.txt': P('one', 'two', 'three') },
  args: { path: 'list.txt', old_string: 'two\n', new_string: '' },
  expected: { 'list.txt': P('one', 'three') },
  result: update('list.txt', 'Edited list.txt (+0 -1).', 0, 1),
});
S('007_insert_lines', {
  input: { 'list.txt': P('one', 'two', 'three') },
  args: { path: 'list.txt', old_string: 'two\n', new_string: 'two\ntwo and a half\n' },
  expected: { 'list.txt': P('one', 'two', 'two and a half', 'three') },
  result: update('list.txt', 'Edited list.txt (+1 -0).', 1, 0),
});
S('008_no_final_newline_kept', {
  input: { 'a.txt': 'alpha\nbeta' },
  args: { path: 'a.txt', old_string: 'beta', new_string: 'BETA' },
  expected: { 'a.txt': 'alpha\nBETA' },
  result: update('a.txt', 'Edited a.txt (+1 -1).', 1, 1),
});
S('009_unicode_text', {
  input: { 'u.txt': P('héllo wörld 🎉 end', 'naïve café') },
  args: { path: 'u.txt', old_string: 'wörld 🎉', new_string: 'world 🎈' },
  expected: { 'u.txt': P('héllo world 🎈 end', 'naïve café') },
});
S('010_new_string_line_breaks_follow_the_file', {
  input: { 'a.txt': P('alpha', 'beta') },
  args: { path: 'a.txt', old_string: 'beta\n', new_string: 'beta\r\ngamma\r\n' },
  expected: { 'a.txt': P('alpha', 'beta', 'gamma') },
  result: update('a.txt', 'Edited a.txt (+1 -0).', 1, 0),
});
S('011_dotdot_resolved_inside', {
  input: { 'dir/inner.txt': 'inner\n' },
  args: { path: 'dir/../dir/inner.txt', old_string: 'inner', new_string: 'inner 2' },
  expected: { 'dir/inner.txt': 'inner 2\n' },
  result: update('dir/inner.txt', 'Edited dir/inner.txt (+1 -1).', 1, 1),
});

// ---- new files (an empty old_string creates a file that must not exist) ----
S('020_create_file', {
  input: { 'keep.txt': 'keep\n' },
  args: { path: 'notes.md', old_string: '', new_string: '# Notes\n\nText.\n' },
  expected: { 'keep.txt': 'keep\n', 'notes.md': '# Notes\n\nText.\n' },
  result: { affected_files: [{ path: 'notes.md', operation: 'add' }], additions: 3, removals: 0, text: 'Created notes.md (+3).' },
});
S('021_create_file_and_directories', {
  input: {},
  args: { path: 'src/deep/mod.ts', old_string: '', new_string: 'export const x = 1;' },
  expected: { 'src/deep/mod.ts': 'export const x = 1;' },
  result: { additions: 1, text: 'Created src/deep/mod.ts (+1).' },
});
S('022_create_empty_file', {
  input: {},
  args: { path: 'empty.txt', old_string: '', new_string: '' },
  expected: { 'empty.txt': '' },
  result: { additions: 0, removals: 0, text: 'Created empty.txt (+0).' },
});

// ---- encodings and line endings kept (README "Editing files") ----
S('030_crlf_file_stays_crlf', {
  input: { 'win.txt': 'one\r\ntwo\r\nthree\r\n' },
  args: { path: 'win.txt', old_string: 'one\ntwo\n', new_string: 'one\n2\nextra\n' },
  expected: { 'win.txt': 'one\r\n2\r\nextra\r\nthree\r\n' },
  result: update('win.txt', 'Edited win.txt (+2 -1).', 2, 1),
});
S('031_bom_preserved', {
  input: { 'bom.txt': '\ufeffalpha\nbeta\n' },
  args: { path: 'bom.txt', old_string: 'alpha', new_string: 'ALPHA' },
  expected: { 'bom.txt': '\ufeffALPHA\nbeta\n' },
});
S('032_bom_and_crlf_together', {
  input: { 'both.txt': '\ufeffalpha\r\nbeta\r\n' },
  args: { path: 'both.txt', old_string: 'alpha\nbeta', new_string: 'alpha\ninserted\nbeta' },
  expected: { 'both.txt': '\ufeffalpha\r\ninserted\r\nbeta\r\n' },
  result: update('both.txt', 'Edited both.txt (+1 -0).', 1, 0),
});
S('033_mixed_line_endings_kept_outside_the_edit', {
  input: { 'mixed.txt': 'a\r\nb\nc\r\nd\r\n' },
  args: { path: 'mixed.txt', old_string: 'b', new_string: 'B' },
  expected: { 'mixed.txt': 'a\r\nB\nc\r\nd\r\n' },
});
S('034_exec_mode_preserved', {
  input: { 'run.sh': { content: P('#!/bin/sh', 'echo hi'), mode: 0o755 } },
  args: { path: 'run.sh', old_string: 'echo hi', new_string: 'echo hello' },
  expected: { 'run.sh': { content: P('#!/bin/sh', 'echo hello'), mode: 0o755 } },
});

// ---- EDIT_NOT_FOUND: the nearest region, or a near miss with the exact retry ----
S('100_not_found_nearest_region', {
  input: { 'src/math.js': math },
  args: { path: 'src/math.js', old_string: 'function add(a, b) {\n  return a * b;\n}', new_string: 'x' },
  error: { code: 'EDIT_NOT_FOUND', details: { nearest: { start_line: 1, equal_lines: 2 } } },
});
S('101_near_miss_trailing_whitespace', {
  input: { 'ws.js': 'start();   \nfinish();\n' },
  args: { path: 'ws.js', old_string: 'start();\nfinish();', new_string: 'begin();\nend();' },
  error: {
    code: 'EDIT_NOT_FOUND',
    details: { near_miss: 'trailing_whitespace', line: 1 },
    retry_old_string: 'start();   \nfinish();',
  },
});
S('102_near_miss_indentation', {
  input: { 'f.py': P('def f(x):', '    if x:', '        return 1', '    return 0') },
  args: { path: 'f.py', old_string: '  if x:\n    return 1', new_string: '  if x > 0:\n    return 1' },
  error: {
    code: 'EDIT_NOT_FOUND',
    details: { near_miss: 'whitespace', line: 2 },
    retry_old_string: '    if x:\n        return 1',
  },
});
S('103_near_miss_line_endings_crlf_sent', {
  input: { 'lf.txt': P('alpha', 'beta', 'gamma') },
  args: { path: 'lf.txt', old_string: 'alpha\r\nbeta', new_string: 'ALPHA\nBETA' },
  error: {
    code: 'EDIT_NOT_FOUND',
    details: { near_miss: 'line_endings', line: 1 },
    retry_old_string: 'alpha\nbeta',
  },
});
S('104_near_miss_line_endings_lone_cr_file', {
  input: { 'mac.txt': 'one\rtwo\rthree\r' },
  args: { path: 'mac.txt', old_string: 'one\ntwo', new_string: 'one\n2' },
  error: {
    code: 'EDIT_NOT_FOUND',
    details: { near_miss: 'line_endings', line: 1 },
    retry_old_string: 'one\rtwo',
  },
});
S('105_near_miss_typographic_punctuation_in_file', {
  input: { 'doc.md': P('# Title', 'He said “don’t” — twice.', 'End') },
  args: { path: 'doc.md', old_string: 'He said "don\'t" - twice.', new_string: 'He said it once.' },
  error: {
    code: 'EDIT_NOT_FOUND',
    details: { near_miss: 'punctuation', line: 2 },
    retry_old_string: 'He said “don’t” — twice.',
  },
});
S('106_near_miss_typographic_punctuation_sent', {
  input: { 'q.js': P('const s = "it\'s - fine";') },
  args: { path: 'q.js', old_string: 'const s = “it’s – fine”;', new_string: 'const s = "ok";' },
  error: {
    code: 'EDIT_NOT_FOUND',
    details: { near_miss: 'punctuation', line: 1 },
    retry_old_string: 'const s = "it\'s - fine";',
  },
});
S('107_near_miss_in_several_places_lists_them', {
  input: { 'two.py': P('def a():', '\tx = 1', 'def b():', '\t\tx = 1') },
  args: { path: 'two.py', old_string: '    x = 1', new_string: '    x = 2' },
  error: { code: 'EDIT_NOT_FOUND', details: { near_miss: 'whitespace', match_lines: [2, 4] } },
});
S('108_not_found_in_empty_file', {
  input: { 'empty.txt': '' },
  args: { path: 'empty.txt', old_string: 'anything', new_string: 'x' },
  error: { code: 'EDIT_NOT_FOUND' },
});

// ---- EDIT_AMBIGUOUS ----
S('110_ambiguous_lists_each_line', {
  input: { 'dup.py': P('x = 1', 'y = 2', 'x = 1', 'z = 3', 'x = 1') },
  args: { path: 'dup.py', old_string: 'x = 1', new_string: 'x = 10' },
  error: { code: 'EDIT_AMBIGUOUS', details: { match_count: 3, match_lines: [1, 3, 5] } },
});
S('111_ambiguous_overlapping', {
  input: { 'a.txt': 'aaa\n' },
  args: { path: 'a.txt', old_string: 'aa', new_string: 'b' },
  error: { code: 'EDIT_AMBIGUOUS', details: { match_count: 2, match_lines: [1, 1] } },
});

// ---- refusals ----
S('120_create_on_existing_file', {
  input: { 'keep.txt': 'keep\n' },
  args: { path: 'keep.txt', old_string: '', new_string: 'replaced\n' },
  error: { code: 'PATCH_FAILED', details: { reason: 'exists', path: 'keep.txt' } },
});
S('121_edit_missing_file', {
  input: { 'keep.txt': 'keep\n' },
  args: { path: 'missing.txt', old_string: 'a', new_string: 'b' },
  error: { code: 'NOT_FOUND', details: { path: 'missing.txt' } },
});
S('122_same_old_and_new', {
  input: { 'keep.txt': 'keep\n' },
  args: { path: 'keep.txt', old_string: 'keep', new_string: 'keep' },
  error: { code: 'INVALID_ARGUMENT' },
});
S('123_non_utf8_refused', {
  input: { 'latin1.txt': Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]) },
  args: { path: 'latin1.txt', old_string: 'caf', new_string: 'cafe' },
  error: { code: 'UNSUPPORTED_ENCODING', details: { path: 'latin1.txt' } },
});
S('124_binary_refused', {
  input: { 'bin.dat': Buffer.from([0x61, 0x00, 0x62, 0x0a]) },
  args: { path: 'bin.dat', old_string: 'a', new_string: 'b' },
  error: { code: 'BINARY_FILE' },
});
S('125_directory_refused', {
  input: { 'dir/inner.txt': 'inner\n' },
  args: { path: 'dir', old_string: 'inner', new_string: 'x' },
  error: { code: 'IS_DIRECTORY' },
});
S('126_path_outside_workspace', {
  input: { 'keep.txt': 'keep\n' },
  args: { path: '../escape.txt', old_string: '', new_string: 'x' },
  error: { code: 'PATH_OUTSIDE_WORKSPACE' },
});
S('127_symlink_leading_outside', {
  input: { 'keep.txt': 'keep\n' },
  setup: { symlinks: { 'out.txt': '{outside}/secret.txt', 'outdir': '{outside}' } },
  args: { path: 'out.txt', old_string: 'secret', new_string: 'pwned' },
  error: { code: 'SYMLINK_ESCAPE' },
});
S('128_create_inside_linked_directory_outside', {
  input: { 'keep.txt': 'keep\n' },
  setup: { symlinks: { outdir: '{outside}' } },
  args: { path: 'outdir/new.txt', old_string: '', new_string: 'pwned' },
  error: { code: 'SYMLINK_ESCAPE' },
});
S('129_symlink_inside_not_written_through', {
  input: { 'real.txt': 'real\n' },
  setup: { symlinks: { 'link.txt': 'real.txt' } },
  args: { path: 'link.txt', old_string: 'real', new_string: 'through the link' },
  error: { code: 'PATCH_FAILED', details: { reason: 'symlink' } },
});
S('130_git_internals_refused', {
  input: { 'keep.txt': 'keep\n' },
  args: { path: '.git/hooks/pre-commit', old_string: '', new_string: '#!/bin/sh\n' },
  error: { code: 'PATCH_FAILED', details: { reason: 'git_internal' } },
});
S('131_parent_is_a_file', {
  input: { 'a.txt': 'a\n' },
  args: { path: 'a.txt/new.txt', old_string: '', new_string: 'x' },
  error: { code: 'PATCH_FAILED', details: { reason: 'parent_not_directory' } },
});

// ---------------------------------------------------------------------------------------------------------

function writeTree(dir, tree) {
  mkdirSync(dir, { recursive: true });
  for (const [rel, v] of Object.entries(tree)) {
    const file = path.join(dir, rel);
    mkdirSync(path.dirname(file), { recursive: true });
    const entry = typeof v === 'string' || Buffer.isBuffer(v) ? { content: v, mode: 0o644 } : v;
    writeFileSync(file, entry.content);
    chmodSync(file, entry.mode);
  }
}

const json = (v) => JSON.stringify(v, null, 2) + '\n';
for (const name of readdirSync(HERE)) {
  if (/^\d{3}_/.test(name)) rmSync(path.join(HERE, name), { recursive: true, force: true });
}
for (const s of scenarios) {
  const dir = path.join(HERE, s.name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'args.json'), json(s.args));
  writeTree(path.join(dir, 'input'), s.input);
  // git keeps no empty directories; a .keep marks an empty tree and is ignored by the runner.
  if (Object.keys(s.input).length === 0) writeFileSync(path.join(dir, 'input', '.keep'), '');
  if (s.setup) writeFileSync(path.join(dir, 'setup.json'), json(s.setup));
  if (s.error) writeFileSync(path.join(dir, 'expected_error.json'), json(s.error));
  else writeTree(path.join(dir, 'expected'), s.expected);
  if (s.result) writeFileSync(path.join(dir, 'expected_result.json'), json(s.result));
}
console.log(`${scenarios.length} scenarios written`);
