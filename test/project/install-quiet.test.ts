// `npm install` in a checkout is quiet on the Node the package names (package.json "engines"): no locked package
// asks for a newer Node (npm prints an EBADENGINE warning for each), and every locked package with an install
// script has its entry in "allowScripts" (npm 11 skips an unreviewed one and warns about it: `npm help
// install-scripts`).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/server.js';

interface Locked {
  version?: string;
  engines?: { node?: string };
  hasInstallScript?: boolean;
}
const pkg = JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as {
  engines: { node: string };
  allowScripts?: Record<string, boolean>;
};
const lock = JSON.parse(readFileSync(path.join(REPO_ROOT, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, Locked>;
};
const locked = Object.entries(lock.packages).filter(([k]) => k.startsWith('node_modules/'));
const nameOf = (k: string) => k.slice(k.lastIndexOf('node_modules/') + 'node_modules/'.length);

/** The lowest Node major a range such as `>=14`, `^18.0.0 || >=20` or `>= 22` accepts. */
function lowestMajor(range: string): number {
  return Math.min(...range.split('||').map((r) => Number(/(\d+)/.exec(r)?.[1] ?? 0)));
}

describe('npm install is quiet', () => {
  it('no locked package needs a newer Node than package.json names', () => {
    const ours = lowestMajor(pkg.engines.node);
    const newer = locked
      .filter(([, v]) => v.engines?.node !== undefined && lowestMajor(v.engines.node) > ours)
      .map(([k, v]) => `${nameOf(k)}@${v.version} wants node ${v.engines?.node}`);
    expect(newer).toEqual([]);
  });

  it('every locked package with an install script is decided in allowScripts', () => {
    const decided = Object.keys(pkg.allowScripts ?? {}).map((k) => k.replace(/(.)@.*$/, '$1'));
    const open = locked
      .filter(([k, v]) => v.hasInstallScript && !decided.includes(nameOf(k)))
      .map(([k, v]) => `${nameOf(k)}@${v.version}`);
    expect(open).toEqual([]);
  });
});
