// The documentation (docs/design-notes.md#documentation): a README that fits on a screen (at most 12 KB) and
// keeps "The two commands" exactly; every relative link and anchor in README.md and docs/ resolves; the generated
// tables of docs/configuration.md and docs/tools.md equal what the code generates (npm run docs:generate).
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { errorTableMarkdown, toolTableMarkdown } from '../../src/tools/doc-table.js';
import { ALL_TOOL_ERROR_CODES } from '../../src/core/tool-error.js';
import { toolSummaries } from '../../src/tools/registry.js';
import { anchors, links } from '../helpers/markdown.js';
import { BIN, REPO_ROOT } from '../helpers/server.js';

const README = path.join(REPO_ROOT, 'README.md');
const DOCS = path.join(REPO_ROOT, 'docs');
const pages = () => [
  README,
  ...readdirSync(DOCS)
    .filter((f) => f.endsWith('.md'))
    .map((f) => path.join(DOCS, f)),
];

describe('README.md', () => {
  it('is at most 12 KB and keeps the two commands exactly, with a clone line above them', () => {
    const text = readFileSync(README, 'utf8');
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(12 * 1024);
    const two = text.slice(text.indexOf('## The two commands'));
    expect(two).toContain(
      '```sh\nnpm install --prefix /path/to/workbench-mcp && npm --prefix /path/to/workbench-mcp start\n```',
    );
    expect(two).toContain('```sh\nnpm install && npm test\n```');
    expect(text.slice(0, text.indexOf('## The two commands'))).toMatch(/git clone \S+/);
  });
});

describe('links and anchors in README.md and docs/', () => {
  it('every relative link names a file that exists, and every anchor a heading of it', () => {
    const broken: string[] = [];
    let checked = 0;
    for (const page of pages()) {
      const md = readFileSync(page, 'utf8');
      for (const link of links(md)) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(link)) continue; // https:, mailto:
        checked++;
        const [file, anchor] = link.split('#') as [string, string | undefined];
        const target = file === '' ? page : path.resolve(path.dirname(page), decodeURIComponent(file));
        const where = `${path.relative(REPO_ROOT, page)}: ${link}`;
        if (!target.startsWith(REPO_ROOT + path.sep) || !existsSync(target)) {
          broken.push(`${where} (no such file)`);
          continue;
        }
        if (anchor === undefined || statSync(target).isDirectory() || !target.endsWith('.md')) continue;
        if (!anchors(readFileSync(target, 'utf8')).has(anchor)) broken.push(`${where} (no such anchor)`);
      }
    }
    expect(broken).toEqual([]);
    expect(checked).toBeGreaterThan(30);
  });

  it('every repository path the pages name in code (`src/…`, `test/…`, `scripts/…`) exists', () => {
    const missing: string[] = [];
    for (const page of pages()) {
      for (const m of readFileSync(page, 'utf8').matchAll(
        /`((?:src|test|bench|scripts|deploy|docs)\/[^`\s]+)`/g,
      )) {
        const p = (m[1] as string).split('#')[0] as string;
        if (/[*{<]|\.cache/.test(p)) continue; // globs, placeholders, caches made by a run
        if (!existsSync(path.join(REPO_ROOT, p))) missing.push(`${path.relative(REPO_ROOT, page)}: ${p}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('the checker itself: GitHub anchors, code is not a link', () => {
    const a = anchors(
      '# OAuth 2.1\n## Under attack: connections and the password page\n## `tools/list`\n## A\n## A\n',
    );
    expect([...a]).toEqual([
      'oauth-21',
      'under-attack-connections-and-the-password-page',
      'toolslist',
      'a',
      'a-1',
    ]);
    expect(links('see [x](a.md#b) and `[y](nope.md)`\n```\n[z](nope.md)\n```\n')).toEqual(['a.md#b']);
  });
});

describe('generated tables', () => {
  const between = (file: string, marker: string) => {
    const text = readFileSync(path.join(DOCS, file), 'utf8');
    const m = new RegExp(`<!-- ${marker}:start -->\\n([\\s\\S]*?)\\n<!-- ${marker}:end -->`).exec(text);
    expect(m, `${file} has no ${marker} markers`).not.toBeNull();
    return (m as RegExpExecArray)[1];
  };

  it('docs/configuration.md holds `--print-config-table` verbatim (npm run docs:generate)', () => {
    const r = spawnSync(process.execPath, [BIN, '--print-config-table'], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(r.status).toBe(0);
    expect(between('configuration.md', 'config-table')).toBe(r.stdout.trim());
  });

  it('docs/tools.md holds the catalog table verbatim (npm run docs:generate)', () => {
    const table = toolTableMarkdown(toolSummaries());
    expect(table.split('\n')).toHaveLength(2 + toolSummaries().length);
    expect(between('tools.md', 'tool-table')).toBe(table);
  });

  it('docs/tools.md holds the error table verbatim: every ToolErrorCode, with category, retry and next step', () => {
    const table = errorTableMarkdown();
    expect(table.split('\n')).toHaveLength(2 + ALL_TOOL_ERROR_CODES.length);
    for (const code of ALL_TOOL_ERROR_CODES) expect(table).toContain(`| \`${code}\` |`);
    expect(between('tools.md', 'error-table')).toBe(table);
  });
});
