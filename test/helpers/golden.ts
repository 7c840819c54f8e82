// What the golden suites of apply_patch and edit_file share (test/golden/<tool>/NNN_name/): the scenario list,
// the check that each scenario has its input and exactly one expectation, the workspace reset to a
// scenario's input, and one in-process server over a temporary workspace for the whole file.
import { cpSync, existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import { REPO_ROOT, startInProcess, type InProcessServer } from './server.js';
import { makeWorkspace, type TempWorkspace } from './workspace.js';

export interface Golden {
  /** test/golden/<tool>. */
  root: string;
  /** The scenario folders, NNN_name, in order. */
  scenarios: string[];
}

export function goldenOf(tool: string): Golden {
  const root = path.join(REPO_ROOT, 'test/golden', tool);
  const scenarios = readdirSync(root)
    .filter((n) => /^\d{3}_/.test(n))
    .sort();
  return { root, scenarios };
}

/** At least `min` scenarios, each with `input` (its request) and either expected/ or expected_error.json. */
export function expectWellFormed(g: Golden, input: string, min = 40): void {
  expect(g.scenarios.length).toBeGreaterThanOrEqual(min);
  for (const s of g.scenarios) {
    const dir = path.join(g.root, s);
    expect(existsSync(path.join(dir, input)), s).toBe(true);
    expect(
      existsSync(path.join(dir, 'expected')) !== existsSync(path.join(dir, 'expected_error.json')),
      s,
    ).toBe(true);
  }
}

export const readJson = (file: string): unknown => JSON.parse(readFileSync(file, 'utf8'));

/** Empties `dir` and copies `from` into it (when it exists), without the `.keep` that holds empty folders in git. */
export function resetTree(dir: string, from: string): void {
  for (const name of readdirSync(dir)) rmSync(path.join(dir, name), { recursive: true, force: true });
  if (existsSync(from)) cpSync(from, dir, { recursive: true });
  rmSync(path.join(dir, '.keep'), { force: true });
}

/** A temporary workspace and an in-process server on it, for the whole test file. */
export function goldenServer(): { ws: () => TempWorkspace; srv: () => InProcessServer } {
  let ws: TempWorkspace | undefined;
  let srv: InProcessServer | undefined;
  beforeAll(async () => {
    ws = makeWorkspace();
    srv = await startInProcess({ workspace: ws.dir });
  });
  afterAll(async () => {
    await srv?.close();
    ws?.cleanup();
  });
  return { ws: () => ws as TempWorkspace, srv: () => srv as InProcessServer };
}
