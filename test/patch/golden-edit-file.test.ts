// README "Editing files" (edit_file): every golden scenario in test/golden/edit_file is sent through a real
// in-process HTTP server; the whole resulting tree (names, bytes, executable bits, no leftovers) is compared
// with expected/, or with input/ when expected_error.json names the error. A near miss must offer the file's
// own text as old_string, and sending that retry verbatim must succeed. setup.json makes symlinks, some into a
// directory outside the workspace, which must never change.
import { existsSync, mkdirSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectWellFormed, goldenOf, goldenServer, readJson, resetTree } from '../helpers/golden.js';
import { callTool } from '../helpers/rpc.js';
import { readableTree } from '../helpers/tree-snapshot.js';
import { makeWorkspace, type TempWorkspace } from '../helpers/workspace.js';

const GOLDEN = goldenOf('edit_file');
const served = goldenServer();
let outside: TempWorkspace;

beforeAll(() => {
  outside = makeWorkspace({ 'secret.txt': 'secret\n' });
});
afterAll(() => outside.cleanup());

/** The scenario's input, then the symlinks its setup.json makes (some into a directory outside the workspace). */
function resetWorkspace(wsDir: string, dir: string): void {
  resetTree(wsDir, path.join(dir, 'input'));
  const setup = path.join(dir, 'setup.json');
  if (!existsSync(setup)) return;
  const { symlinks } = readJson(setup) as { symlinks: Record<string, string> };
  for (const [link, target] of Object.entries(symlinks)) {
    mkdirSync(path.dirname(path.join(wsDir, link)), { recursive: true });
    symlinkSync(target.replace('{outside}', outside.dir), path.join(wsDir, link));
  }
}

interface ExpectedError {
  code: string;
  details?: Record<string, unknown>;
  /** The file's own text the error must offer as old_string (a near miss). */
  retry_old_string?: string;
}

describe('edit_file golden scenarios (README "Editing files")', () => {
  it('has scenarios of every kind, each with arguments and one expectation', () => {
    expectWellFormed(GOLDEN, 'args.json');
  });

  for (const name of GOLDEN.scenarios) {
    it(name, async () => {
      const ws = served.ws();
      const srv = served.srv();
      const dir = path.join(GOLDEN.root, name);
      const args = readJson(path.join(dir, 'args.json')) as Record<string, unknown>;
      resetWorkspace(ws.dir, dir);
      const before = readableTree(ws.dir);
      const outsideBefore = readableTree(outside.dir);
      const r = await callTool(srv.url, 'edit_file', args);
      const text = r.content[0]?.text ?? '';
      expect(r.content).toHaveLength(1);
      expect(readableTree(outside.dir), 'nothing outside the workspace changes').toEqual(outsideBefore);

      const errorFile = path.join(dir, 'expected_error.json');
      if (existsSync(errorFile)) {
        const want = readJson(errorFile) as ExpectedError;
        expect(r.isError, text).toBe(true);
        const error = r.structuredContent.error;
        expect(error.code, text).toBe(want.code);
        if (want.details) expect(error.details, text).toMatchObject(want.details);
        expect(text.startsWith(`${want.code}: `)).toBe(true);
        expect(readableTree(ws.dir), 'the tree is unchanged after an error').toEqual(before);
        if (want.code === 'EDIT_NOT_FOUND' || want.code === 'EDIT_AMBIGUOUS') {
          expect(error.retryable).toBe(true);
          expect(error.category).toBe('conflict');
        }
        const next = error.details.next_action as
          { tool: string; arguments: Record<string, unknown> } | undefined;
        if (want.retry_old_string === undefined) {
          expect(next, 'a retry only for a near miss with one candidate').toBeUndefined();
          return;
        }
        // The exact retry: the file's own text as old_string, new_string as sent, in the text too.
        const retry = { ...args, old_string: want.retry_old_string };
        expect(next).toEqual({ tool: 'edit_file', arguments: retry });
        expect(text).toContain(`\nRetry: edit_file ${JSON.stringify(retry)}\n`);
        const again = await callTool(srv.url, next!.tool, next!.arguments);
        expect(again.isError, again.content[0]?.text).toBe(false);
        return;
      }

      expect(r.isError, text).toBe(false);
      expect(readableTree(ws.dir)).toEqual(readableTree(path.join(dir, 'expected')));
      const sc = r.structuredContent;
      expect(sc.ok).toBe(true);
      expect(
        Object.keys(sc).filter((k) => !['ok', 'affected_files', 'additions', 'removals'].includes(k)),
      ).toEqual([]);
      expect(sc.affected_files).toHaveLength(1);
      expect(text).toMatch(/^(Edited|Created) \S+( \(|: \d+ replacements \()\+\d+( -\d+)?\)\.$/);
      const resultFile = path.join(dir, 'expected_result.json');
      if (existsSync(resultFile)) {
        const { text: wantText, ...fields } = readJson(resultFile) as Record<string, unknown>;
        if (wantText !== undefined) expect(text).toBe(wantText);
        // A field at its default (0) is left out of the result.
        for (const [k, v] of Object.entries(fields)) {
          if (v === 0) expect(sc[k], k).toBeUndefined();
          else expect(sc[k], k).toEqual(v);
        }
      }
    });
  }
});
