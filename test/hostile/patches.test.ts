// Patches and unified diffs: property-based, over real HTTP on 127.0.0.1. Each generated patch (Codex
// envelope or unified diff) is a random mix of operations that would apply — updates with real context, adds,
// deletes, moves — plus exactly one poison at a random place: a path outside the workspace (absolute, `..`,
// through a symlink), a missing or existing target, a directory, context that is absent, a huge hunk, an
// ambiguous one, one already applied, a parse error. The whole patch must fail with the poison's specific
// code (docs/tools.md#editing-files: all operations are parsed and matched before anything is written;
// docs/design-notes.md#patch-failures) and the workspace tree must be exactly as before — same entries,
// bytes, modes, inodes and mtimes, no temp or backup files — with the canary directory beside it untouched.
// Randomly mutated patches run too, with and without dry_run: a failure leaves the tree exactly as before; a
// success changes only the files it reports (and their new parent directories). A valid patch after each
// property proves the server still serves and still writes.
import fc from 'fast-check';
import { mkdirSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  callRaw,
  fcParams,
  judge,
  makeLayout,
  printTallies,
  snapshot,
  startHostile,
  stillServing,
  WORKSPACE_FILES,
  type HostileServer,
  type Layout,
} from './support.js';
import { treeChanges } from '../helpers/tree-snapshot.js';

/* eslint-disable @typescript-eslint/no-explicit-any */

let L: Layout;
let srv: HostileServer;

/** Files the generated valid operations use (never touched by a poison). */
const EXTRA: Record<string, string> = {
  'dup.txt': 'x\nsame\nx\nsame\n',
  'p/one.txt': 'first line one\nsecond line one\nthird line one\n',
  'p/two.txt': 'first line two\nsecond line two\nthird line two\n',
  'p/three.txt': 'first line three\nsecond line three\nthird line three\n',
  'p/del1.txt': 'delete me 1\n',
  'p/del2.txt': 'delete me 2\n',
  'p/mv1.txt': 'move me 1\nkeep 1\n',
  'p/mv2.txt': 'move me 2\nkeep 2\n',
};
const FILES = { ...WORKSPACE_FILES, ...EXTRA };

/** The workspace as built (no git: the restore after a successful mutated patch rewrites it all). */
function build(ws: string): void {
  for (const name of readdirSync(ws)) rmSync(path.join(ws, name), { recursive: true, force: true });
  for (const [rel, content] of Object.entries(FILES)) {
    mkdirSync(path.dirname(path.join(ws, rel)), { recursive: true });
    writeFileSync(path.join(ws, rel), content);
  }
  symlinkSync('src/main.ts', path.join(ws, 'link-inside.ts'));
  symlinkSync(path.join(L.canary, 'secret.txt'), path.join(ws, 'link-out.txt'));
  symlinkSync(L.canary, path.join(ws, 'link-out-dir'));
}

beforeAll(async () => {
  L = makeLayout({ git: false });
  build(L.ws);
  srv = await startHostile({ workspace: L.ws });
});
afterAll(async () => {
  printTallies();
  await srv?.close();
  L?.cleanup();
});

// ---- Operations, in a format-neutral form rendered as an envelope or a unified diff. ----

type Op =
  | {
      kind: 'update';
      path: string;
      hunks: Array<{ ctx?: string; minus: string[]; plus: string[] }>;
      moveTo?: string;
    }
  | { kind: 'add'; path: string; lines: string[] }
  | { kind: 'delete'; path: string; lines: string[] }
  | { kind: 'raw'; text: string };

const token = fc.string({
  unit: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz0123456789'.split('')),
  minLength: 6,
  maxLength: 12,
});
const addedLine = fc.oneof(
  token.map((t) => `added ${t}`),
  fc
    .string({ unit: 'grapheme', maxLength: 30 })
    .map((s) => `g ${s.replace(/[\r\n\u2028\u2029\u0085]/g, ' ')}`),
);
const lines = (s: string) => s.split('\n').slice(0, -1);

/** Valid operations on disjoint files; at most one per file. */
const validOps: fc.Arbitrary<Op[]> = fc
  .tuple(
    fc.subarray(['p/one.txt', 'p/two.txt', 'p/three.txt']),
    fc.subarray(['p/del1.txt', 'p/del2.txt']),
    fc.subarray(['p/mv1.txt', 'p/mv2.txt']),
    fc.array(token, { maxLength: 2 }),
    fc.array(addedLine, { minLength: 1, maxLength: 4 }),
    fc.integer({ min: 0, max: 2 }),
  )
  .map(([upd, del, mv, adds, plus, at]) => {
    const ops: Op[] = [];
    for (const p of upd) {
      const ls = lines(EXTRA[p] as string);
      ops.push({
        kind: 'update',
        path: p,
        hunks: [{ ctx: at > 0 ? ls[at - 1] : undefined, minus: [ls[at] as string], plus }],
      });
    }
    for (const p of del) ops.push({ kind: 'delete', path: p, lines: lines(EXTRA[p] as string) });
    for (const p of mv) {
      const ls = lines(EXTRA[p] as string);
      ops.push({
        kind: 'update',
        path: p,
        moveTo: `moved/${path.basename(p)}`,
        hunks: [{ minus: [ls[0] as string], plus }],
      });
    }
    [...new Set(adds)].forEach((t) => ops.push({ kind: 'add', path: `new/${t}.txt`, lines: plus }));
    return ops;
  });

interface Poison {
  name: string;
  op: Op;
  codes: string[];
}

function poisons(): fc.Arbitrary<Poison> {
  const canary = L.canary;
  const fixed: Poison[] = [
    {
      name: 'add ../canary',
      op: { kind: 'add', path: '../canary/pwn.txt', lines: ['pwned'] },
      codes: ['PATH_OUTSIDE_WORKSPACE'],
    },
    {
      name: 'add src/../../canary',
      op: { kind: 'add', path: 'src/../../canary/pwn.txt', lines: ['pwned'] },
      codes: ['PATH_OUTSIDE_WORKSPACE'],
    },
    {
      name: 'add absolute canary',
      op: { kind: 'add', path: `${canary}/pwn.txt`, lines: ['pwned'] },
      codes: ['PATH_OUTSIDE_WORKSPACE'],
    },
    {
      name: 'update absolute canary',
      op: {
        kind: 'update',
        path: `${canary}/secret.txt`,
        hunks: [{ minus: ['canary secret'], plus: ['pwned'] }],
      },
      codes: ['PATH_OUTSIDE_WORKSPACE'],
    },
    {
      name: 'update /etc/passwd',
      op: {
        kind: 'update',
        path: '/etc/passwd',
        hunks: [{ minus: ['root:x:0:0:root:/root:/bin/bash'], plus: ['pwned'] }],
      },
      codes: ['PATH_OUTSIDE_WORKSPACE'],
    },
    {
      name: 'delete ../canary',
      op: { kind: 'delete', path: '../canary/a.txt', lines: ['canary a'] },
      codes: ['PATH_OUTSIDE_WORKSPACE'],
    },
    {
      name: 'move out',
      op: {
        kind: 'update',
        path: 'AGENTS.md',
        moveTo: '../canary/moved.md',
        hunks: [{ minus: ['Run the tests.'], plus: ['x'] }],
      },
      codes: ['PATH_OUTSIDE_WORKSPACE'],
    },
    {
      name: 'add through link-out-dir',
      op: { kind: 'add', path: 'link-out-dir/pwn.txt', lines: ['pwned'] },
      codes: ['SYMLINK_ESCAPE'],
    },
    {
      name: 'update through link-out.txt',
      op: { kind: 'update', path: 'link-out.txt', hunks: [{ minus: ['canary secret'], plus: ['pwned'] }] },
      codes: ['SYMLINK_ESCAPE'],
    },
    {
      name: 'delete through link-out-dir',
      op: { kind: 'delete', path: 'link-out-dir/a.txt', lines: ['canary a'] },
      codes: ['SYMLINK_ESCAPE'],
    },
    {
      name: 'move into link-out-dir',
      op: {
        kind: 'update',
        path: 'AGENTS.md',
        moveTo: 'link-out-dir/moved.md',
        hunks: [{ minus: ['Run the tests.'], plus: ['x'] }],
      },
      codes: ['SYMLINK_ESCAPE'],
    },
    {
      name: 'update a symlink inside',
      op: {
        kind: 'update',
        path: 'link-inside.ts',
        hunks: [{ minus: ['  return 42;'], plus: ['  return 0;'] }],
      },
      codes: ['PATCH_FAILED'],
    },
    {
      name: 'update missing',
      op: { kind: 'update', path: 'nope/missing.txt', hunks: [{ minus: ['a'], plus: ['b'] }] },
      codes: ['PATCH_FAILED'],
    },
    {
      name: 'delete missing',
      op: { kind: 'delete', path: 'missing.txt', lines: ['x'] },
      codes: ['PATCH_FAILED'],
    },
    { name: 'add existing', op: { kind: 'add', path: 'src/main.ts', lines: ['x'] }, codes: ['PATCH_FAILED'] },
    {
      name: 'delete a directory',
      op: { kind: 'delete', path: 'src/deep', lines: ['x'] },
      codes: ['PATCH_FAILED'],
    },
    {
      name: 'move onto an existing file',
      op: {
        kind: 'update',
        path: 'AGENTS.md',
        moveTo: 'crlf.txt',
        hunks: [{ minus: ['Run the tests.'], plus: ['x'] }],
      },
      codes: ['PATCH_FAILED'],
    },
    {
      name: 'ambiguous context',
      op: { kind: 'update', path: 'dup.txt', hunks: [{ minus: ['same'], plus: ['other'] }] },
      codes: ['PATCH_CONTEXT_AMBIGUOUS'],
    },
    {
      name: 'already applied',
      op: {
        kind: 'update',
        path: 'src/main.ts',
        hunks: [{ minus: ['  return 41;'], plus: ['  return 42;'] }],
      },
      codes: ['PATCH_ALREADY_APPLIED'],
    },
    {
      name: 'NUL in a path',
      op: { kind: 'add', path: 'new/a\0b.txt', lines: ['x'] },
      codes: ['INVALID_ARGUMENT', 'PATCH_FAILED'],
    },
    {
      name: 'name too long',
      op: { kind: 'add', path: `new/${'x'.repeat(300)}.txt`, lines: ['x'] },
      codes: ['PATCH_FAILED', 'INVALID_ARGUMENT'],
    },
    {
      name: 'path too long',
      op: { kind: 'add', path: `${'a/'.repeat(2100)}x.txt`, lines: ['x'] },
      codes: ['PATCH_FAILED', 'INVALID_ARGUMENT'],
    },
    {
      name: 'add under a file',
      op: { kind: 'add', path: 'src/main.ts/child.txt', lines: ['x'] },
      codes: ['PATCH_FAILED', 'NOT_A_DIRECTORY'],
    },
    {
      name: 'add the workspace root',
      op: { kind: 'add', path: '.', lines: ['x'] },
      codes: ['PATCH_FAILED', 'INVALID_ARGUMENT'],
    },
  ];
  const absent = fc.array(token, { minLength: 1, maxLength: 5 }).map((ts): Poison => ({
    name: 'context absent',
    op: {
      kind: 'update',
      path: 'src/deep/nested/file.txt',
      hunks: [{ minus: ts.map((t) => `gone ${t}`), plus: ['new line'] }],
    },
    codes: ['PATCH_CONTEXT_NOT_FOUND'],
  }));
  const huge = fc.tuple(token, fc.constantFrom(2_000, 20_000)).map(([t, n]): Poison => ({
    name: `huge hunk ${n}`,
    op: {
      kind: 'update',
      path: 'docs/guide.md',
      hunks: [
        {
          minus: Array.from({ length: n }, (_, i) => `absent ${t} ${i}`),
          plus: Array.from({ length: n }, (_, i) => `new ${t} ${i}`),
        },
      ],
    },
    codes: ['PATCH_CONTEXT_NOT_FOUND'],
  }));
  return fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...fixed) },
    { weight: 2, arbitrary: absent },
    { weight: 1, arbitrary: huge },
  );
}

/** Parse-level poisons of the envelope: a line that no grammar rule allows. */
const PARSE_POISONS = [
  '*** Frobnicate File: x.txt',
  '~~~ not a patch line',
  '*** Add File:',
  '*** Update File:',
];

function envelope(ops: Op[]): string {
  const out = ['*** Begin Patch'];
  for (const op of ops) {
    if (op.kind === 'raw') out.push(op.text);
    else if (op.kind === 'add') out.push(`*** Add File: ${op.path}`, ...op.lines.map((l) => `+${l}`));
    else if (op.kind === 'delete') out.push(`*** Delete File: ${op.path}`);
    else {
      out.push(`*** Update File: ${op.path}`);
      if (op.moveTo) out.push(`*** Move to: ${op.moveTo}`);
      for (const h of op.hunks) {
        out.push(h.ctx === undefined ? '@@' : `@@ ${h.ctx}`);
        out.push(...h.minus.map((l) => `-${l}`), ...h.plus.map((l) => `+${l}`));
      }
    }
  }
  out.push('*** End Patch');
  return out.join('\n') + '\n';
}

function unified(ops: Op[]): string {
  const out: string[] = [];
  for (const op of ops) {
    if (op.kind === 'raw') out.push(op.text);
    else if (op.kind === 'add')
      out.push(
        `diff --git a/${op.path} b/${op.path}`,
        'new file mode 100644',
        '--- /dev/null',
        `+++ b/${op.path}`,
        `@@ -0,0 +1,${op.lines.length} @@`,
        ...op.lines.map((l) => `+${l}`),
      );
    else if (op.kind === 'delete')
      out.push(
        `diff --git a/${op.path} b/${op.path}`,
        'deleted file mode 100644',
        `--- a/${op.path}`,
        '+++ /dev/null',
        `@@ -1,${op.lines.length} +0,0 @@`,
        ...op.lines.map((l) => `-${l}`),
      );
    else {
      const to = op.moveTo ?? op.path;
      out.push(`diff --git a/${op.path} b/${to}`);
      if (op.moveTo) out.push('similarity index 90%', `rename from ${op.path}`, `rename to ${to}`);
      out.push(`--- a/${op.path}`, `+++ b/${to}`);
      for (const h of op.hunks) {
        const ctx = h.ctx === undefined ? [] : [` ${h.ctx}`];
        out.push(
          `@@ -1,${ctx.length + h.minus.length} +1,${ctx.length + h.plus.length} @@`,
          ...ctx,
          ...h.minus.map((l) => `-${l}`),
          ...h.plus.map((l) => `+${l}`),
        );
      }
    }
  }
  return out.join('\n') + '\n';
}

/** One apply_patch call whose every outcome is checked: specific, and the trees as they must be. */
async function apply(patch: string, dryRun: boolean | undefined) {
  const before = { ws: snapshot(L.ws), canary: snapshot(L.canary) };
  srv.takeErrors();
  const args: Record<string, unknown> = { patch };
  if (dryRun !== undefined) args.dry_run = dryRun;
  const r = await callRaw(srv.url, 'apply_patch', args);
  const label = `apply_patch dry_run=${dryRun}\n${patch.slice(0, 1500)}\n→ ${r.text.slice(0, 500)}`;
  expect(srv.takeErrors(), `${label}\nthe server logged an error`).toEqual([]);
  const v = judge(r, label);
  expect(treeChanges(before.canary, snapshot(L.canary)), `${label}\ncanary changed`).toEqual([]);
  const changed = treeChanges(before.ws, snapshot(L.ws));
  return { v, r, label, changed, before };
}

/** A successful patch changed exactly what it reports (and created parent directories), nothing else. */
function onlyReported(result: any, changed: string[], label: string): void {
  const reported = new Set<string>();
  for (const f of result.structuredContent.affected_files ?? []) {
    for (const p of [f.path, f.old_path].filter(Boolean) as string[]) {
      const parts = p.split('/');
      for (let i = 1; i <= parts.length; i++) reported.add(parts.slice(0, i).join('/'));
    }
  }
  const stray = changed.map((c) => c.slice(0, c.indexOf(': '))).filter((k) => k !== '' && !reported.has(k));
  expect(stray, `${label}\nchanged but not reported`).toEqual([]);
}

const restore = () => build(L.ws);

describe('generated patches with one poison fail whole, the tree exactly as before (docs/tools.md#editing-files)', () => {
  for (const [format, render] of [
    ['envelope', envelope],
    ['unified diff', unified],
  ] as const) {
    it(`${format}: valid operations + one poison at a random place → the poison's code, nothing written`, async () => {
      const arb = fc
        .tuple(validOps, poisons(), fc.nat(), fc.constantFrom(undefined, false, true))
        .map(([ops, poison, at, dry]) => {
          const all = [...ops];
          all.splice(at % (ops.length + 1), 0, poison.op);
          return { patch: render(all), poison, dry };
        });
      restore();
      await fc.assert(
        fc.asyncProperty(arb, async ({ patch, poison, dry }) => {
          const { v, label, changed } = await apply(patch, dry);
          expect(v.kind, `${label}\n(poison: ${poison.name})`).toBe('tool');
          expect(poison.codes, `${label}\n(poison: ${poison.name})`).toContain((v as any).code);
          expect(changed, `${label}\nthe workspace changed`).toEqual([]);
        }),
        fcParams(150),
      );
      await stillServing(srv.url);
    });
  }

  it('envelope: a line no grammar rule allows, anywhere → INVALID_ARGUMENT naming its line, nothing written', async () => {
    const arb = fc.tuple(validOps, fc.constantFrom(...PARSE_POISONS), fc.nat()).map(([ops, bad, at]) => {
      const text = envelope(ops).split('\n');
      const line = 1 + (at % (text.length - 2)); // after Begin Patch, before End Patch
      text.splice(line, 0, bad);
      return { patch: text.join('\n'), line: line + 1 };
    });
    restore();
    await fc.assert(
      fc.asyncProperty(arb, async ({ patch }) => {
        const { v, r, label, changed } = await apply(patch, undefined);
        expect(v, label).toEqual({ kind: 'tool', code: 'INVALID_ARGUMENT' });
        expect(r.json.result.structuredContent.error.details.line, label).toBeTypeOf('number');
        expect(changed, label).toEqual([]);
      }),
      fcParams(100),
    );
  });
});

describe('mutated and random patches (docs/tools.md#editing-files, docs/design-notes.md#patch-failures)', () => {
  /** A valid patch with character-level damage: deletions, insertions of hostile bytes, duplicated lines. */
  const mutated = fc
    .tuple(
      validOps,
      fc.constantFrom(envelope, unified),
      fc.array(fc.tuple(fc.nat(), fc.nat({ max: 8 }), fc.string({ unit: 'binary-ascii', maxLength: 6 })), {
        minLength: 1,
        maxLength: 5,
      }),
    )
    .map(([ops, render, edits]) => {
      let s = render(ops);
      for (const [at, del, ins] of edits) {
        const i = at % (s.length + 1);
        s = s.slice(0, i) + ins + s.slice(i + del);
      }
      return s;
    });
  const junk = fc.oneof(
    fc.string({ unit: 'binary', maxLength: 300 }),
    fc
      .array(
        fc.constantFrom(
          '*** Begin Patch',
          '*** End Patch',
          '*** Add File: x',
          '*** Update File: README.md',
          '*** Delete File: empty.txt',
          '@@',
          '+a',
          '-a',
          ' a',
          '',
          '--- a/x',
          '+++ b/x',
          '@@ -1 +1 @@',
          '\\ No newline at end of file',
          '*** End of File',
          '<<EOF',
          'EOF',
          '```',
        ),
        { maxLength: 12 },
      )
      .map((a) => a.join('\n')),
  );

  it('with dry_run: true nothing is ever written, whatever the patch', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(mutated, junk), async (patch) => {
        const { label, changed } = await apply(patch, true);
        expect(changed, label).toEqual([]);
      }),
      fcParams(150),
    );
  });

  it('applied for real: a failure leaves the tree exactly as before, a success changes only what it reports', async () => {
    let successes = 0;
    await fc.assert(
      fc.asyncProperty(fc.oneof(mutated, junk), async (patch) => {
        const { v, label, changed } = await apply(patch, false);
        if (v.kind === 'tool') expect(changed, label).toEqual([]);
        else {
          successes++;
          onlyReported((v as any).result, changed, label);
          restore();
        }
      }),
      fcParams(150),
    );
    console.log(`[hostile] mutated patches that still applied (and were checked, then undone): ${successes}`);
    await stillServing(srv.url);
  });

  it('the server still writes after all of it: a valid patch applies and reports what it did', async () => {
    const before = snapshot(L.ws);
    const r = await callRaw(srv.url, 'apply_patch', {
      patch: envelope([
        { kind: 'update', path: 'p/one.txt', hunks: [{ minus: ['second line one'], plus: ['SECOND'] }] },
      ]),
    });
    expect(judge(r, 'final patch').kind).toBe('ok');
    expect(treeChanges(before, snapshot(L.ws)).map((d) => d.split(':')[0])).toEqual(['p/one.txt']);
    restore();
  });
});
