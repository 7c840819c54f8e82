// Test-only tools that are not dependencies (docs/design-notes.md#tests): `.ci/run`
// installs each, pinned, into node_modules/.cache/<name>/ (`npm install --no-save --prefix …`), and the tests
// find them there. Absent (a developer's machine that never ran .ci/run): the test skips with the install
// command printed; under CI=true it fails instead.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { REPO_ROOT } from './server.js';

export const CACHED = {
  'playwright-core': { dir: 'playwright', pkg: 'playwright-core@1.65.1', entry: 'playwright-core/index.mjs' },
  'mcp-remote': { dir: 'mcp-remote', pkg: 'mcp-remote@0.15.1', entry: 'mcp-remote/dist/client.js' },
  // The accessibility checker the console's browser test runs in the page (test/console/).
  'axe-core': { dir: 'axe', pkg: 'axe-core@4.11.0', entry: 'axe-core/axe.min.js' },
} as const;

export type CachedTool = keyof typeof CACHED;

/** Absolute path of the tool's entry file in its cache directory (it may not exist). */
export function cachedPath(tool: CachedTool): string {
  const c = CACHED[tool];
  return path.join(REPO_ROOT, 'node_modules/.cache', c.dir, 'node_modules', c.entry);
}

/** Why the tool cannot be used here, or undefined when it is installed. */
export function missingReason(tool: CachedTool): string | undefined {
  if (existsSync(cachedPath(tool))) return undefined;
  const c = CACHED[tool];
  return `${tool} is not installed for tests (npm install --no-save --prefix node_modules/.cache/${c.dir} ${c.pkg}, as .ci/run does)`;
}

export async function importCached<T>(tool: CachedTool): Promise<T> {
  return (await import(pathToFileURL(cachedPath(tool)).href)) as T;
}

/** The part of playwright-core the browser tests use (its types are not installed with the project). */
export interface Playwright {
  chromium: { launch(options: Record<string, unknown>): Promise<any> }; // eslint-disable-line @typescript-eslint/no-explicit-any
}
