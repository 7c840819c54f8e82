// The layers of docs/architecture.md are enforced by `npm run lint` (.dependency-cruiser.cjs): the real source
// passes, and a planted layer violation and a planted import cycle (of type imports alone) are each refused.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from './helpers/server.js';

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
