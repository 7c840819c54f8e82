// docs/tools.md#editing-files (and docs/design-notes.md#tests): every golden scenario in
// test/golden/apply_patch is applied through a real in-process HTTP server, first as a dry run (nothing may
// change, same verdict), then for real; the whole resulting tree (names, bytes, executable bits, no
// leftovers) is compared with expected/, or with input/ when expected_error.json names the error code and
// patch line.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { expectWellFormed, goldenOf, goldenServer, readJson, resetTree } from '../helpers/golden.js';
import { callTool } from '../helpers/rpc.js';
import { readableTree } from '../helpers/tree-snapshot.js';

const GOLDEN = goldenOf('apply_patch');
const served = goldenServer();

/** The A/M/D/R lines the text shows for affected_files. */
function summaryOf(files: Array<{ path: string; operation: string; old_path?: string }>): string {
  const letter: Record<string, string> = { add: 'A', update: 'M', delete: 'D' };
  return files
    .map((f) =>
      f.operation === 'move' ? `R ${f.old_path} -> ${f.path}` : `${letter[f.operation]} ${f.path}`,
    )
    .join('\n');
}

describe('apply_patch golden scenarios (docs/tools.md#editing-files, docs/design-notes.md#tests)', () => {
  it('has at least 40 scenarios, each with a patch and an expectation', () => {
    expectWellFormed(GOLDEN, 'patch.txt');
  });

  for (const name of GOLDEN.scenarios) {
    it(name, async () => {
      const ws = served.ws();
      const srv = served.srv();
      const dir = path.join(GOLDEN.root, name);
      const input = path.join(dir, 'input');
      const patch = readFileSync(path.join(dir, 'patch.txt'), 'utf8');
      const errorFile = path.join(dir, 'expected_error.json');
      resetTree(ws.dir, input);
      const before = readableTree(ws.dir);

      const dry = await callTool(srv.url, 'apply_patch', { patch, dry_run: true });
      expect(readableTree(ws.dir), 'dry_run must write nothing').toEqual(before);
      const real = await callTool(srv.url, 'apply_patch', { patch });
      const text = real.content[0]?.text ?? '';

      if (existsSync(errorFile)) {
        const want = readJson(errorFile) as { code: string; line?: number };
        expect(real.isError, text).toBe(true);
        expect(real.structuredContent.ok).toBe(false);
        expect(real.structuredContent.error.code, text).toBe(want.code);
        if (want.line !== undefined) expect(real.structuredContent.error.details.line, text).toBe(want.line);
        expect(text.startsWith(`${want.code}: `)).toBe(true);
        expect(dry.structuredContent.error?.code, 'dry run reaches the same verdict').toBe(want.code);
        expect(readableTree(ws.dir), 'the tree is unchanged after an error').toEqual(before);
        return;
      }
      expect(dry.isError, dry.content[0]?.text).toBe(false);
      expect(dry.structuredContent.dry_run).toBe(true);
      expect(dry.content[0]?.text).toMatch(/^Patch checked \(\+\d+ -\d+\); dry_run: nothing was written:\n/);
      expect(real.isError, text).toBe(false);
      expect(readableTree(ws.dir)).toEqual(readableTree(path.join(dir, 'expected')));
      const sc = real.structuredContent;
      expect(sc.ok).toBe(true);
      expect(sc.dry_run).toBeUndefined(); // false: left out (docs/design-notes.md#lean-results)
      // The A/M/D/R summary is said once, in the text; affected_files says it in the structured result.
      const summary = summaryOf(sc.affected_files);
      expect(text.startsWith(`Patch applied (+${sc.additions ?? 0} -${sc.removals ?? 0}):\n${summary}`)).toBe(
        true,
      );
      expect({ ...dry.structuredContent, dry_run: undefined }).toEqual({ ...sc, dry_run: undefined });
      const resultFile = path.join(dir, 'expected_result.json');
      if (existsSync(resultFile)) {
        const { summary: wantSummary, ...fields } = readJson(resultFile) as Record<string, unknown>;
        if (wantSummary !== undefined) expect(summary).toBe(wantSummary);
        // A field at its default (0) is left out of the result (docs/design-notes.md#lean-results).
        for (const [k, v] of Object.entries(fields)) {
          if (v === 0) expect(sc[k], k).toBeUndefined();
          else expect(sc[k], k).toEqual(v);
        }
      }
    });
  }
});
