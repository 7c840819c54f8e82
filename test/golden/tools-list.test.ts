// The tools/list snapshot, taken over the wire from a server with
// the default configuration. One golden file per tool, test/golden/tools-list/<name>.json, so a new tool adds
// a file instead of rewriting a shared one; and the order of the tools present must follow the documented
// order (docs/tools.md#results-and-errors), whichever of the 20 exist yet.
//
//   UPDATE_GOLDEN=1 npx vitest run test/golden   rewrites every file (and removes files of tools that are gone)
//
// A tool without a golden file gets one written on a developer's run (like a new vitest snapshot); under
// CI=true a missing file fails instead.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, startInProcess } from '../helpers/server.js';
import { makeWorkspace } from '../helpers/workspace.js';
import { bearer, request, send } from '../helpers/raw-http.js';
import { CONTRACT_ORDER } from '../helpers/catalog-order.js';


const DIR = path.join(REPO_ROOT, 'test/golden/tools-list');
const UPDATE = process.env.UPDATE_GOLDEN === '1';
const CI = process.env.CI === 'true' || process.env.CI === '1';

type Tool = { name: string } & Record<string, unknown>;

const ws = makeWorkspace({ 'README.md': '# golden\n' });
const server = await startInProcess({ workspace: ws.dir });
const handshake = await send(server.url, request('handshake', 'tools/list'), bearer());
const modern = await send(server.url, request('modern', 'tools/list'), bearer());
const TOOLS = (handshake.json?.result?.tools ?? []) as Tool[];

afterAll(async () => {
  await server.close();
  ws.cleanup();
});

const file = (name: string) => path.join(DIR, `${name}.json`);
const render = (t: Tool) => JSON.stringify(t, null, 2) + '\n';

describe('tools/list snapshot (docs/tools.md#results-and-errors)', () => {
  it('answers in both eras with the same tools', () => {
    expect(handshake.status).toBe(200);
    expect(modern.status).toBe(200);
    expect(TOOLS.length).toBeGreaterThan(0);
    expect(modern.json.result.tools).toEqual(TOOLS);
  });

  it('the default catalog has all 20 documented tools, in their order', () => {
    expect(TOOLS.map((t) => t.name)).toEqual(CONTRACT_ORDER);
  });

  it('every tool is one of the documented 20, listed once, in the documented order', () => {
    const names = TOOLS.map((t) => t.name);
    expect(names.filter((n) => !CONTRACT_ORDER.includes(n))).toEqual([]);
    expect(new Set(names).size).toBe(names.length);
    expect(names).toEqual(CONTRACT_ORDER.filter((n) => names.includes(n)));
  });

  it.each(TOOLS.map((t) => [t.name, t] as const))('%s matches test/golden/tools-list/%s.json', (name, tool) => {
    mkdirSync(DIR, { recursive: true });
    if (UPDATE || (!existsSync(file(name)) && !CI)) {
      if (!UPDATE) process.stderr.write(`[golden] wrote new ${path.relative(REPO_ROOT, file(name))}; commit it with the tool\n`);
      writeFileSync(file(name), render(tool));
      return;
    }
    expect(existsSync(file(name)), `no golden file for ${name}: run UPDATE_GOLDEN=1 npx vitest run test/golden and commit it`).toBe(true);
    const golden = JSON.parse(readFileSync(file(name), 'utf8')) as Tool;
    // On a difference: if the change is intended, UPDATE_GOLDEN=1 npx vitest run test/golden, and review the diff.
    expect(tool).toEqual(golden);
    expect(render(tool)).toBe(readFileSync(file(name), 'utf8'));
  });

  it('no golden file is left for a tool that is not listed', () => {
    const present = new Set(TOOLS.map((t) => t.name));
    const stale = existsSync(DIR) ? readdirSync(DIR).filter((f) => f.endsWith('.json') && !present.has(f.slice(0, -5))) : [];
    if (UPDATE) for (const f of stale) rmSync(path.join(DIR, f));
    else expect(stale, 'golden files of tools that tools/list no longer has (UPDATE_GOLDEN=1 removes them)').toEqual([]);
  });
});
