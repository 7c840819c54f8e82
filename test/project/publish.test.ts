// What the directories read before anyone installs the server (docs/development.md#publishing): server.json for
// the MCP Registry, held to the rules of its schema (2025-12-11) that can be checked without the network, and the
// .mcpb manifest (deploy/mcpb/manifest.json), both agreeing with package.json and with the catalog.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { NODE_FLAGS } from '../../src/cli/heap-flags.js';
import { toolSummaries } from '../../src/tools/registry.js';
import { WORKSPACE_TOOLS } from '../../src/tools/catalog.js';
import { REPO_ROOT } from '../helpers/server.js';

const read = (f: string) => JSON.parse(readFileSync(path.join(REPO_ROOT, f), 'utf8'));
const pkg = read('package.json') as { name: string; version: string; mcpName?: string; files: string[] };
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const server = read('server.json') as Record<string, any>;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const manifest = read('deploy/mcpb/manifest.json') as Record<string, any>;

const SCHEMA = 'https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json';
/** The schema's top-level properties (ServerDetail), and a package's (Package). */
const SERVER_KEYS = [
  '$schema',
  '_meta',
  'name',
  'title',
  'description',
  'version',
  'repository',
  'websiteUrl',
  'icons',
  'packages',
  'remotes',
];
const PACKAGE_KEYS = [
  'registryType',
  'registryBaseUrl',
  'identifier',
  'version',
  'fileSha256',
  'runtimeHint',
  'transport',
  'runtimeArguments',
  'packageArguments',
  'environmentVariables',
];
const INPUT_KEYS = [
  'description',
  'isRequired',
  'format',
  'value',
  'isSecret',
  'default',
  'placeholder',
  'choices',
  'variables',
];
/** A version range, which the schema rejects for the server and for a package: ^1.2.3, ~1.2.3, >=1.2.3, 1.x, 1.*. */
const RANGE = /^[\^~><=]|(^|\.)[x*](\.|$)|\s/;

const keysOutside = (o: object, allowed: readonly string[]) =>
  Object.keys(o).filter((k) => !allowed.includes(k));

describe('server.json (MCP Registry, schema 2025-12-11)', () => {
  it("names its schema and has the required fields, each within the schema's bounds", () => {
    expect(server.$schema).toBe(SCHEMA);
    expect(keysOutside(server, SERVER_KEYS)).toEqual([]);
    expect(server.name).toMatch(/^[a-zA-Z0-9.-]+\/[a-zA-Z0-9._-]+$/);
    expect(server.name.length).toBeGreaterThanOrEqual(3);
    expect(server.name.length).toBeLessThanOrEqual(200);
    expect(typeof server.description).toBe('string');
    expect(server.description.length).toBeGreaterThanOrEqual(1);
    expect(server.description.length).toBeLessThanOrEqual(100);
    expect(typeof server.version).toBe('string');
    expect(server.version.length).toBeLessThanOrEqual(255);
    expect(server.version).not.toMatch(RANGE);
    if (server.title !== undefined) expect(server.title.length).toBeGreaterThanOrEqual(1);
    if (server.title !== undefined) expect(server.title.length).toBeLessThanOrEqual(100);
  });

  it("its name is package.json's mcpName (how the registry proves the npm package is ours) and its version the package's", () => {
    expect(pkg.mcpName).toBe(server.name);
    expect(server.version).toBe(pkg.version);
  });

  it('lists the npm package, at this version, from npmjs.org, with the stdio transport', () => {
    const npm = (server.packages as Array<Record<string, any>>).filter((p) => p.registryType === 'npm'); // eslint-disable-line @typescript-eslint/no-explicit-any
    expect(npm).toHaveLength(1);
    const p = npm[0] as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
    expect(keysOutside(p, PACKAGE_KEYS)).toEqual([]);
    expect(p.identifier).toBe(pkg.name);
    expect(p.version).toBe(pkg.version);
    expect(p.version).not.toBe('latest');
    expect(p.registryBaseUrl ?? 'https://registry.npmjs.org').toBe('https://registry.npmjs.org');
    expect(p.transport).toEqual({ type: 'stdio' });
    expect(p.packageArguments.some((a: { value?: string }) => a.value === '--stdio')).toBe(true);
  });

  it('every argument and variable is one the schema allows, and names an option or variable the server has', () => {
    const p = server.packages[0];
    const help = readFileSync(path.join(REPO_ROOT, 'docs/configuration.md'), 'utf8');
    for (const a of p.packageArguments ?? []) {
      expect(keysOutside(a, [...INPUT_KEYS, 'type', 'name', 'valueHint', 'isRepeated'])).toEqual([]);
      if (a.type === 'named') expect(help).toContain(`\`${a.name}`);
      else {
        expect(a.type).toBe('positional');
        expect(a.valueHint ?? a.value).toBeDefined();
      }
      if (a.format) expect(['string', 'number', 'boolean', 'filepath']).toContain(a.format);
    }
    for (const v of p.environmentVariables ?? []) {
      expect(keysOutside(v, [...INPUT_KEYS, 'name'])).toEqual([]);
      expect(help).toContain(v.name);
      if (v.choices && v.default !== undefined) expect(v.choices).toContain(v.default);
    }
  });
});

describe('the .mcpb manifest (deploy/mcpb/manifest.json)', () => {
  it('names the package and its version, runs the bin over stdio on the workspace the user picks', () => {
    expect(manifest.name).toBe(pkg.name);
    expect(manifest.version).toBe(pkg.version);
    expect(manifest.server.type).toBe('node');
    expect(manifest.server.entry_point).toBe('node_modules/workbench-mcp/dist/cli/main.js');
    const { command, args } = manifest.server.mcp_config as { command: string; args: string[] };
    expect(command).toBe('node');
    expect(args).toEqual([
      ...NODE_FLAGS,
      `\${__dirname}/${manifest.server.entry_point}`,
      '--stdio',
      '--workspace',
      '${user_config.workspace}',
    ]);
    expect(manifest.user_config.workspace).toMatchObject({ type: 'directory', required: true });
  });

  it("lists the catalog's tools, and says where it runs", () => {
    // The bundle serves the one workspace Claude Desktop picks: no project roots, so not the workspace tools.
    const served = toolSummaries().filter((t) => !WORKSPACE_TOOLS.has(t.name));
    expect(manifest.tools.map((t: { name: string }) => t.name)).toEqual(served.map((t) => t.name));
    expect(manifest.compatibility.platforms).toEqual(['linux', 'darwin']);
    expect(manifest.compatibility.runtimes.node).toBe('>=20.0.0');
  });

  it('the package ships what runs: dist and the README', () => {
    expect(pkg.files).toEqual(expect.arrayContaining(['dist', 'README.md']));
  });
});
