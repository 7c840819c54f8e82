// Comments cite files of this repository (docs/design-notes.md#documentation): never decision or issue
// numbers or documents outside it, and every docs/<page>.md#<anchor> they name exists. This holds for the
// sources and for what a reader of the repository meets beside them: the tests, the benchmarks with the
// results they write, and the scripts.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { anchors } from '../helpers/markdown.js';
import { REPO_ROOT } from '../helpers/server.js';

const DOCS = path.join(REPO_ROOT, 'docs');
const CODE = /\.(ts|mjs|js|cjs|py|sh|c)$/;
/** Never walked: installed or generated trees. */
const SKIP_DIRS = new Set(['node_modules', '.cache', 'test-artifacts']);
/**
 * Not this project's words: the load harness and the workspace builder are the shared benchmark kit, copied
 * as they are (docs/benchmarks.md); this file names the outside patterns it looks for.
 */
const SKIP_FILES = new Set([
  'bench/mcp-bench.mjs',
  'bench/make-workspace.sh',
  'test/project/source-citations.test.ts',
]);

function files(dir: string, keep: (name: string) => boolean): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return SKIP_DIRS.has(e.name) ? [] : files(full, keep);
    return keep(e.name) && !SKIP_FILES.has(path.relative(REPO_ROOT, full)) ? [full] : [];
  });
}

/** A whole string literal such as 'docs/readme.md' is a file of a test's workspace, not a citation. */
function isFileInATest(text: string, at: number, length: number): boolean {
  const before = text[at - 1] ?? '';
  return `'"\``.includes(before) && before !== '' && text[at + length] === before;
}

const sources = [
  ...files(path.join(REPO_ROOT, 'src'), (n) => n.endsWith('.ts')),
  ...['test', 'bench', 'scripts'].flatMap((d) => files(path.join(REPO_ROOT, d), (n) => CODE.test(n))),
  ...files(path.join(REPO_ROOT, 'bench/results'), (n) => /\.(md|json)$/.test(n)),
];

describe('comments cite this repository (src/, test/, bench/, scripts/)', () => {
  it('reads the files it checks', () => {
    const rel = sources.map((f) => path.relative(REPO_ROOT, f));
    for (const f of ['src/cli/main.ts', 'test/helpers/server.ts', 'bench/run-all.mjs', 'scripts/bundle.mjs'])
      expect(rel).toContain(f);
    expect(rel.some((f) => f.startsWith('bench/results/'))).toBe(true);
    expect(rel).not.toContain('bench/mcp-bench.mjs');
  });

  it('no decision or issue numbers, no contract or spec documents outside the repository', () => {
    const outside = new RegExp(
      [
        String.raw`\bdecisions?(\.md)? \d`,
        String.raw`\bdecisions\.md\b`,
        String.raw`\bissues? \d`,
        // The names of documents outside the repository, spelled in parts so this file does not name them.
        ['tool', 'contract'].join('-'),
        ['http-and-auth', 'contract'].join('-'),
        String.raw`real-clients\.md`,
        String.raw`\bspec §`,
        String.raw`\.\.\/shared\/`,
      ].join('|'),
      'i',
    );
    const found: string[] = [];
    for (const f of sources) {
      readFileSync(f, 'utf8')
        .split('\n')
        .forEach((line, i) => {
          if (outside.test(line)) found.push(`${path.relative(REPO_ROOT, f)}:${i + 1}: ${line.trim()}`);
        });
    }
    expect(found).toEqual([]);
  });

  it('every docs/<page>.md#<anchor> a comment names exists', () => {
    const missing: string[] = [];
    for (const f of sources) {
      const text = readFileSync(f, 'utf8');
      for (const m of text.matchAll(/docs\/([a-z0-9-]+\.md)(?:#([a-z0-9-]+))?/g)) {
        if (isFileInATest(text, m.index, m[0].length)) continue;
        const page = path.join(DOCS, m[1] as string);
        if (!existsSync(page)) missing.push(`${path.relative(REPO_ROOT, f)}: ${m[0]} (no such page)`);
        else if (m[2] && !anchors(readFileSync(page, 'utf8')).has(m[2]))
          missing.push(`${path.relative(REPO_ROOT, f)}: ${m[0]} (no such anchor)`);
      }
    }
    expect(missing).toEqual([]);
  });
});
