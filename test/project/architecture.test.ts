// The layers of docs/architecture.md are enforced by `npm run lint` (.dependency-cruiser.cjs): the real source
// passes, and a planted layer violation and a planted import cycle (of type imports alone) are each refused.
// And no function in src/ is longer than the style allows (rule 8), measured by the TypeScript compiler.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { functionLengths } from '../helpers/function-lengths.js';
import { REPO_ROOT } from '../helpers/server.js';

const DEPCRUISE = path.join(REPO_ROOT, 'node_modules/.bin/depcruise');

function cruise(cwd: string): { status: number | null; out: string } {
  const r = spawnSync(DEPCRUISE, ['src', '--config', '.dependency-cruiser.cjs', '--output-type', 'err'], {
    cwd,
    encoding: 'utf8',
  });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

describe('layers and cycles (docs/architecture.md)', () => {
  let copy: string;
  beforeAll(() => {
    copy = mkdtempSync(path.join(tmpdir(), 'wb-layers-'));
    for (const f of ['src', 'tsconfig.json', '.dependency-cruiser.cjs'])
      cpSync(path.join(REPO_ROOT, f), path.join(copy, f), { recursive: true });
  });
  afterAll(() => rmSync(copy, { recursive: true, force: true }));

  it('the source has no layer violation and no import cycle', () => {
    const r = cruise(REPO_ROOT);
    expect(r.status, r.out).toBe(0);
  });

  it('a lower layer importing a higher one is refused, naming the rule', () => {
    const planted = path.join(copy, 'src/core/planted-upward.ts');
    writeFileSync(
      planted,
      "import type { Runtime } from '../runtime/runtime.js';\nexport type R = Runtime;\n",
    );
    try {
      const r = cruise(copy);
      expect(r.status).not.toBe(0);
      expect(r.out).toMatch(/layer-core/);
      expect(r.out).toMatch(/planted-upward\.ts/);
    } finally {
      rmSync(planted);
    }
  });

  it('an import cycle of type imports is refused', () => {
    const a = path.join(copy, 'src/process/planted-a.ts');
    const b = path.join(copy, 'src/process/planted-b.ts');
    writeFileSync(a, "import type { B } from './planted-b.js';\nexport interface A { b?: B }\n");
    writeFileSync(b, "import type { A } from './planted-a.js';\nexport interface B { a?: A }\n");
    try {
      const r = cruise(copy);
      expect(r.status).not.toBe(0);
      expect(r.out).toMatch(/no-circular/);
      expect(r.out).toMatch(/planted-a\.ts/);
    } finally {
      rmSync(a);
      rmSync(b);
    }
  });
});

// docs/architecture.md#style, rule 8: no function over MAX_FUNCTION_LINES lines in src/, measured by the
// TypeScript compiler (test/helpers/function-lengths.ts). A parser whose cases read best as one function may
// stay longer only when listed in PARSERS with the reason; none needs it now. UNSPLIT lists functions still
// over the limit while they are being split; an entry that is no longer over it fails too, so both lists only
// shrink.
const MAX_FUNCTION_LINES = 60;
const PARSERS: ReadonlyMap<string, string> = new Map<string, string>([]);
const UNSPLIT: ReadonlySet<string> = new Set([]);

describe(`functions of at most ${MAX_FUNCTION_LINES} lines (docs/architecture.md#style)`, () => {
  const all = functionLengths(path.join(REPO_ROOT, 'src'));

  it('measures the source (a scan that finds nothing would pass anything)', () => {
    expect(all.length).toBeGreaterThan(1000);
    expect(all.find((f) => f.id === 'policy/shell-words.ts#lex')?.lines).toBeGreaterThan(1);
  });

  it('no function is longer, outside the listed parsers', () => {
    const long = all.filter((f) => f.lines > MAX_FUNCTION_LINES && !PARSERS.has(f.id) && !UNSPLIT.has(f.id));
    expect(long.map((f) => `${f.at} ${f.id}: ${f.lines} lines`)).toEqual([]);
  });

  it('every listed function still needs its place on the list', () => {
    const over = new Set(all.filter((f) => f.lines > MAX_FUNCTION_LINES).map((f) => f.id));
    expect([...PARSERS.keys(), ...UNSPLIT].filter((id) => !over.has(id))).toEqual([]);
  });
});
