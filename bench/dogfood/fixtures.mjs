// Fixture projects for the dogfood benchmark, created at run time in a fresh temp directory: a small JS
// project whose plain-assert test fails, and a small Python project whose unittest fails. Each is a git
// repository with one commit, so git_diff shows exactly what the task changed.
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const JS_FILES = {
  'package.json': JSON.stringify({ name: 'calc', version: '1.0.0', private: true }, null, 2) + '\n',
  'README.md': '# calc\n\nSmall arithmetic helpers. Run the tests with `node test/math.test.js`.\n',
  'src/math.js': [
    "'use strict';",
    '',
    '/** Sum of two numbers. */',
    'function add(a, b) {',
    '  return a - b;',
    '}',
    '',
    '/** Product of two numbers. */',
    'function multiply(a, b) {',
    '  return a * b;',
    '}',
    '',
    'module.exports = { add, multiply };',
    '',
  ].join('\n'),
  'src/index.js':
    "'use strict';\nconst { add, multiply } = require('./math');\nconsole.log(add(2, 3), multiply(2, 3));\n",
  'test/math.test.js': [
    "'use strict';",
    "const assert = require('node:assert');",
    "const { add, multiply } = require('../src/math');",
    '',
    'assert.strictEqual(multiply(2, 3), 6);',
    'assert.strictEqual(add(2, 3), 5);',
    "console.log('ok: 2 tests passed');",
    '',
  ].join('\n'),
};

const PY_FILES = {
  'README.md': '# shapes\n\nArea helpers. Run the tests with `python3 -m unittest`.\n',
  'shapes.py': [
    '"""Area helpers."""',
    '',
    '',
    'def rectangle_area(width, height):',
    '    return width * height',
    '',
    '',
    'def triangle_area(base, height):',
    '    return base * height',
    '',
  ].join('\n'),
  'test_shapes.py': [
    'import unittest',
    '',
    'from shapes import rectangle_area, triangle_area',
    '',
    '',
    'class ShapesTest(unittest.TestCase):',
    '    def test_rectangle(self):',
    '        self.assertEqual(rectangle_area(2, 3), 6)',
    '',
    '    def test_triangle(self):',
    '        self.assertEqual(triangle_area(4, 3), 6)',
    '',
    '',
    "if __name__ == '__main__':",
    '    unittest.main()',
    '',
  ].join('\n'),
};

function git(dir, ...args) {
  const r = spawnSync(
    'git',
    [
      '-c',
      'user.name=Dogfood',
      '-c',
      'user.email=dogfood@example.invalid',
      '-c',
      'init.defaultBranch=main',
      ...args,
    ],
    { cwd: dir, encoding: 'utf8', env: { PATH: process.env.PATH, GIT_CONFIG_NOSYSTEM: '1', HOME: dir } },
  );
  if (r.status !== 0) throw new Error(`git ${args.join(' ')} failed: ${r.stderr}`);
}

function writeProject(dir, files) {
  for (const [rel, body] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    writeFileSync(path.join(dir, rel), body);
  }
  writeFileSync(path.join(dir, '.gitignore'), '__pycache__/\nnode_modules/\n');
  git(dir, 'init', '-q');
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'Initial commit');
}

/** The JS project alone in `dir` (bench/loop-bench.mjs: a fresh copy for every run of the loop). */
export function makeJsProject(dir) {
  writeProject(dir, JS_FILES);
  return dir;
}

/** Creates <root>/js and <root>/py; returns their paths. */
export function makeFixtures(root) {
  const js = path.join(root, 'js');
  const py = path.join(root, 'py');
  writeProject(js, JS_FILES);
  writeProject(py, PY_FILES);
  return { js, py };
}
