// .gitignore semantics for listing and search: the root's `.git/info/exclude`, then a `.gitignore` per
// directory, each applying to paths below its own directory; the deepest file with a matching rule decides,
// and an ignored directory is not entered (so its children cannot be re-included, as in git). Also the
// fixed default excludes of the tool contract.
import path from 'node:path';
import ignore, { type Ignore } from 'ignore';
import { readSmallFile } from './confined-fs.js';

const IGNORE_FILE_MAX_BYTES = 1024 * 1024;

export const DEFAULT_EXCLUDES: ReadonlySet<string> = new Set([
  '.git',
  'node_modules',
  'dist',
  'build',
  'target',
  '.venv',
  'venv',
  '__pycache__',
  '.tox',
  '.mypy_cache',
  '.pytest_cache',
  '.ruff_cache',
]);

interface RuleSet {
  /** Directory of the .gitignore, relative to the root ('' for the root). */
  dir: string;
  ig: Rules;
}

/** Tests before the matcher is rebuilt: the `ignore` package remembers every path it was asked about. */
const RESULTS_KEPT = 4096;

/**
 * One ignore file's rules. The `ignore` package caches the answer for every path (and parent) it tests, which
 * over a walk of 80,000 files is megabytes held until the walk ends; rebuilding it every RESULTS_KEPT tests
 * bounds that (the walker never needs a parent's cached answer: an ignored directory is not entered).
 */
class Rules {
  private ig: Ignore;
  private tests = 0;

  constructor(private readonly text: string) {
    this.ig = ignore({ allowRelativePaths: true }).add(text);
  }

  test(p: string): { ignored: boolean; unignored: boolean } {
    if (++this.tests > RESULTS_KEPT) {
      this.ig = ignore({ allowRelativePaths: true }).add(this.text);
      this.tests = 1;
    }
    return this.ig.test(p);
  }
}

export class IgnoreChain {
  private constructor(private readonly sets: readonly RuleSet[]) {}

  static empty(): IgnoreChain {
    return new IgnoreChain([]);
  }

  /** Rules that apply at the workspace root. */
  static forRoot(rootAbs: string): IgnoreChain {
    const sets: RuleSet[] = [];
    const exclude = readRules(path.join(rootAbs, '.git', 'info', 'exclude'));
    if (exclude) sets.push({ dir: '', ig: exclude });
    const chain = new IgnoreChain(sets);
    return chain.descend(rootAbs, '');
  }

  /** The chain for directory `dirRel` (relative to root) whose absolute path is `dirAbs`. */
  descend(dirAbs: string, dirRel: string): IgnoreChain {
    const ig = readRules(path.join(dirAbs, '.gitignore'));
    if (!ig) return this;
    return new IgnoreChain([...this.sets, { dir: dirRel === '.' ? '' : dirRel, ig }]);
  }

  ignores(rel: string, isDir: boolean): boolean {
    for (let i = this.sets.length - 1; i >= 0; i--) {
      const s = this.sets[i] as RuleSet;
      const sub = s.dir === '' ? rel : rel.startsWith(s.dir + '/') ? rel.slice(s.dir.length + 1) : undefined;
      if (sub === undefined || sub === '') continue;
      const r = s.ig.test(isDir ? sub + '/' : sub);
      if (r.ignored) return true;
      if (r.unignored) return false;
    }
    return false;
  }
}

function readRules(file: string): Rules | undefined {
  // No symlink in the last component, no blocking on a FIFO, regular files of sane size only.
  const buf = readSmallFile(file, IGNORE_FILE_MAX_BYTES);
  if (!buf) return undefined;
  const text = buf.toString('utf8');
  // Only comments and blank lines (the `.git/info/exclude` that git init writes): nothing to test per path.
  if (!/^(?!#)[ \t]*\S/m.test(text)) return undefined;
  return new Rules(text);
}
