// --projects / SERVICE_PROJECTS as config/load.ts reads them (docs/configuration.md#several-projects): the flag
// repeats, the variable is `:`-separated, bad roots are refused with the setting named, and without
// --workspace there is no default workspace.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, load, type Config } from '../../src/config/load.js';
import { makeWorkspace } from '../helpers/workspace.js';

const ws = makeWorkspace({});
const [a, b] = ['a', 'b'].map((d) => path.join(ws.dir, d)) as [string, string];
mkdirSync(a);
mkdirSync(b);
afterAll(() => ws.cleanup());

function config(argv: string[], env: Record<string, string> = {}): Config {
  const action = load(argv, { PATH: '/usr/bin:/bin', ...env }, ws.dir);
  if (action.kind !== 'serve') throw new Error('not serve');
  return action.config;
}

describe('project roots', () => {
  it('--projects repeats; SERVICE_PROJECTS is separated by `:`', () => {
    expect(config(['--projects', a, '--projects', b]).projectRoots).toEqual([a, b]);
    expect(config([], { SERVICE_PROJECTS: `${a}:${b}` }).projectRoots).toEqual([a, b]);
  });

  it('without --workspace there is no default workspace; with it, it stays the default', () => {
    const none = config(['--projects', a]);
    expect(none.noDefaultWorkspace).toBe(true);
    expect(none.workspace).toBe(a);
    const given = config(['--projects', a, '--workspace', b]);
    expect(given.noDefaultWorkspace).toBeUndefined();
    expect(given.workspace).toBe(b);
    const plain = config([]);
    expect(plain.projectRoots).toBeUndefined();
    expect(plain.workspace).toBe(ws.dir);
  });

  it('a relative root, `/` and a missing root are refused, naming the setting', () => {
    const cases: Array<[string[], Record<string, string>, RegExp]> = [
      [['--projects', 'src'], {}, /--projects: "src" is not an absolute path/],
      [[], { SERVICE_PROJECTS: `${a}:/` }, /SERVICE_PROJECTS: "\/" would open the whole host/],
      [['--projects', path.join(ws.dir, 'nope')], {}, /--projects: .*nope" does not exist/],
    ];
    for (const [argv, env, want] of cases) expect(() => config(argv, env)).toThrow(want);
    expect(() => config(['--projects', 'src'])).toThrow(ConfigError);
  });
});
