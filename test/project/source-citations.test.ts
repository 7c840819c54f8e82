// Source comments cite files of this repository (docs/design-notes.md#documentation): never decision or issue
// numbers or documents outside it, and every docs/<page>.md#<anchor> they name exists.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { anchors } from '../helpers/markdown.js';
import { REPO_ROOT } from '../helpers/server.js';

const DOCS = path.join(REPO_ROOT, 'docs');

describe('source comments cite this repository', () => {
  const files = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
      e.isDirectory()
        ? files(path.join(dir, e.name))
        : e.name.endsWith('.ts')
          ? [path.join(dir, e.name)]
          : [],
    );
  const sources = files(path.join(REPO_ROOT, 'src'));

  it('no decision or issue numbers, no contract or spec documents outside the repository', () => {
    const outside =
      /\bdecisions?(\.md)? \d|\bdecisions\.md\b|\bissues? \d|tool-contract|http-and-auth-contract|real-clients\.md|\bspec §|\.\.\/shared\//;
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
      for (const m of readFileSync(f, 'utf8').matchAll(/docs\/([a-z0-9-]+\.md)(?:#([a-z0-9-]+))?/g)) {
        const page = path.join(DOCS, m[1] as string);
        if (!existsSync(page)) missing.push(`${path.relative(REPO_ROOT, f)}: ${m[0]} (no such page)`);
        else if (m[2] && !anchors(readFileSync(page, 'utf8')).has(m[2]))
          missing.push(`${path.relative(REPO_ROOT, f)}: ${m[0]} (no such anchor)`);
      }
    }
    expect(missing).toEqual([]);
  });
});
