// The layers of docs/architecture.md are enforced by `npm run lint` (.dependency-cruiser.cjs): the real source
// passes, and a planted layer violation, a planted import cycle (of type imports alone) and a planted import
// for each room rule are each refused, naming the rule on the planted file's line.
// And no function in src/ is longer than the style allows (rule 8), measured by the TypeScript compiler.
// dependency-cruiser takes seconds per run: the real source and one copy holding every plant are cruised once
// each, side by side in child processes, while the TypeScript compiler measures the functions here.
import { spawn } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { functionLengths, type FunctionLength } from '../helpers/function-lengths.js';
import { REPO_ROOT } from '../helpers/server.js';

const DEPCRUISE = path.join(REPO_ROOT, 'node_modules/.bin/depcruise');

interface Cruise {
  status: number | null;
  out: string;
  /** The lines that name a refusal. */
  lines: string[];
}

function cruise(cwd: string): Promise<Cruise> {
  const child = spawn(DEPCRUISE, ['src', '--config', '.dependency-cruiser.cjs', '--output-type', 'err'], {
    cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (out += c.toString()));
  return new Promise((resolve) => {
    child.once('error', (e) => resolve({ status: null, out: `${out}${e.message}`, lines: [] }));
    child.once('close', (status) => resolve({ status, out, lines: out.split('\n') }));
  });
}

/** A copy of what dependency-cruiser reads, for planting violations without touching the repository. */
function sourceCopy(prefix: string): string {
  const copy = mkdtempSync(path.join(tmpdir(), prefix));
  for (const f of ['src', 'tsconfig.json', '.dependency-cruiser.cjs'])
    cpSync(path.join(REPO_ROOT, f), path.join(copy, f), { recursive: true });
  return copy;
}

// The rooms of process/ and oauth/ (docs/architecture.md#the-rooms-of-process-and-oauth): for each rule, a file
// planted where the rule forbids the import is refused, naming the rule.
const PLANTED_ROOM_IMPORTS: ReadonlyArray<[rule: string, from: string, to: string]> = [
  ['room-process-spawn', 'src/process/spawn', '../sandbox/sandbox.js'],
  ['room-process-sandbox', 'src/process/sandbox', '../commands/command.js'],
  ['room-process-jail', 'src/process/jail', '../net/net-allow.js'],
  ['room-process-net', 'src/process/net', '../commands/command.js'],
  ['room-process-spawner', 'src/process/spawner', '../commands/launch.js'],
  ['room-process-commands', 'src/process/commands', '../planted-room/x.js'],
  ['room-process-shared', 'src/process', './sandbox/seccomp.js'],
  ['room-oauth-grants', 'src/oauth/grants', '../checks/check.js'],
  ['room-oauth-checks', 'src/oauth/checks', '../clients/cimd.js'],
  ['room-oauth-clients', 'src/oauth/clients', '../endpoints/metadata.js'],
  ['room-oauth-endpoints', 'src/oauth/endpoints', '../planted-room/x.js'],
  ['room-oauth-shared', 'src/oauth', './grants/codes.js'],
  ['room-oauth-assembly', 'src/oauth/endpoints', '../server.js'],
];

/** Plants every violation the tests below look for in `copy`; returns each room plant's rule and file. */
function plantAll(copy: string): Array<{ rule: string; where: string }> {
  // A lower layer importing a higher one.
  writeFileSync(
    path.join(copy, 'src/core/planted-upward.ts'),
    "import type { Runtime } from '../runtime/runtime.js';\nexport type R = Runtime;\n",
  );
  // An import cycle of type imports alone.
  writeFileSync(
    path.join(copy, 'src/process/planted-a.ts'),
    "import type { B } from './planted-b.js';\nexport interface A { b?: B }\n",
  );
  writeFileSync(
    path.join(copy, 'src/process/planted-b.ts'),
    "import type { A } from './planted-a.js';\nexport interface B { a?: A }\n",
  );
  // A room no rule allows anyone to import, for the rooms that may import every other one.
  for (const layer of ['process', 'oauth']) {
    mkdirSync(path.join(copy, 'src', layer, 'planted-room'));
    writeFileSync(path.join(copy, 'src', layer, 'planted-room', 'x.ts'), 'export const x = 1;\n');
  }
  return PLANTED_ROOM_IMPORTS.map(([rule, from, to]) => {
    // The shared top-level files are named by their rule, so a plant there borrows one of their names.
    const name = rule.endsWith('-shared')
      ? rule.includes('process')
        ? 'native.ts'
        : 'html.ts'
      : `planted-${rule}.ts`;
    const file = path.join(copy, from, name);
    const original = existsSync(file) ? readFileSync(file, 'utf8') : '';
    writeFileSync(
      file,
      `${original}\nimport * as planted from '${to}';\nexport const plantedRef = planted;\n`,
    );
    return { rule, where: `${from}/${name}` };
  });
}

let copy: string;
let roomPlants: Array<{ rule: string; where: string }>;
let real: Promise<Cruise>;
let planted: Promise<Cruise>;
let all: FunctionLength[];
// In a hook, not while the file is collected, so that test/durations.json counts this work: both cruises run in
// child processes while the TypeScript compiler measures the functions here.
beforeAll(() => {
  copy = sourceCopy('wb-layers-');
  roomPlants = plantAll(copy);
  real = cruise(REPO_ROOT);
  planted = cruise(copy);
  all = functionLengths(path.join(REPO_ROOT, 'src'));
});
afterAll(async () => {
  await Promise.all([real, planted]);
  if (copy) rmSync(copy, { recursive: true, force: true });
});

/** Whether a refusal line of the planted copy names `rule` and `file`. */
const refuses = (c: Cruise, rule: string, file: string) =>
  c.lines.some((l) => l.includes(`${rule}:`) && l.includes(file));

describe('layers and cycles (docs/architecture.md)', () => {
  it('the source has no layer violation and no import cycle', async () => {
    const r = await real;
    expect(r.status, r.out).toBe(0);
  });

  it('a lower layer importing a higher one is refused, naming the rule', async () => {
    const r = await planted;
    expect(r.status, r.out).not.toBe(0);
    expect(refuses(r, 'layer-core', 'src/core/planted-upward.ts'), r.out).toBe(true);
    // Nothing else is refused under a layer rule: the real source passes them (the test above).
    expect(
      r.lines.filter((l) => /error layer-/.test(l)),
      r.out,
    ).toHaveLength(1);
  });

  it('an import cycle of type imports is refused', async () => {
    const r = await planted;
    expect(r.status, r.out).not.toBe(0);
    expect(refuses(r, 'no-circular', 'src/process/planted-a.ts'), r.out).toBe(true);
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

describe('rooms of process/ and oauth/ (docs/architecture.md)', () => {
  it('each room rule refuses its planted import (one cruise over all the plants)', async () => {
    const r = await planted;
    expect(r.status, r.out).not.toBe(0);
    for (const p of roomPlants)
      expect(refuses(r, p.rule, p.where), `${p.rule} at ${p.where}\n${r.out}`).toBe(true);
    // Nothing but the plants is refused: the real source passes these rules (the first describe checks it too).
    expect(r.lines.filter((l) => /error room-/.test(l))).toHaveLength(roomPlants.length);
  });

  it('no folder of src/ holds more than 20 files directly, except oauth/checks (one rule per file)', () => {
    const over: string[] = [];
    const visit = (dir: string) => {
      const entries = readdirSync(dir, { withFileTypes: true });
      const files = entries.filter((e) => e.isFile() && e.name.endsWith('.ts'));
      const rel = path.relative(path.join(REPO_ROOT, 'src'), dir);
      if (files.length > 20 && rel !== path.join('oauth', 'checks')) over.push(`${rel}: ${files.length}`);
      for (const e of entries) if (e.isDirectory()) visit(path.join(dir, e.name));
    };
    visit(path.join(REPO_ROOT, 'src'));
    expect(over).toEqual([]);
  });

  it('every room opens with a README saying what it owns and who may import it', () => {
    for (const room of [
      'process/spawn',
      'process/sandbox',
      'process/jail',
      'process/net',
      'process/spawner',
      'process/commands',
      'oauth/grants',
      'oauth/checks',
      'oauth/clients',
      'oauth/endpoints',
    ]) {
      const text = readFileSync(path.join(REPO_ROOT, 'src', room, 'README.md'), 'utf8');
      expect(text, room).toMatch(/^# /);
      expect(text, room).toMatch(/May import:/);
    }
  });
});

// docs/architecture.md#style, rule 7: time and randomness are read only by src/core/clock.ts and src/core/random.ts;
// eslint refuses a planted read anywhere else in src/ (and lets those two modules, and the tests, read them).
describe('time and randomness are injected (eslint)', () => {
  const planted = [
    "import { randomBytes } from 'node:crypto';\nexport const a = randomBytes(4);\n",
    'export const b = Date.now();\n',
    'export const c = Math.random();\n',
    'export const d = performance.now();\n',
  ].join('');

  it('a planted read in src/ is refused, once per kind; the clock and random modules may read them', async () => {
    const { ESLint } = await import('eslint');
    const eslint = new ESLint({ cwd: REPO_ROOT });
    const messages = async (file: string) =>
      (await eslint.lintText(planted, { filePath: path.join(REPO_ROOT, file) }))[0]?.messages ?? [];
    const inTools = await messages('src/tools/planted.ts');
    expect(inTools.filter((m) => m.ruleId === 'no-restricted-imports')).toHaveLength(1);
    expect(inTools.filter((m) => m.ruleId === 'no-restricted-syntax')).toHaveLength(3);
    for (const file of ['src/core/clock.ts', 'src/core/random.ts', 'test/planted.test.ts']) {
      const rules = (await messages(file)).map((m) => m.ruleId);
      expect(rules, file).not.toContain('no-restricted-imports');
      expect(rules, file).not.toContain('no-restricted-syntax');
    }
  });
});
