/* global module */
// The layers of docs/architecture.md, enforced by `npm run lint` (dependency-cruiser): each folder of src/ may
// import only the folders below it, and no file may take part in an import cycle, type imports included.
// test/project/architecture.test.ts plants a violation of each kind and checks that this configuration refuses it.
/** Each layer and the folders it may import (besides itself), lowest first. */
const LAYERS = {
  core: [],
  config: ['core'],
  policy: ['core', 'config'],
  process: ['core', 'config'],
  state: ['core', 'config'],
  workspace: ['core', 'config', 'process'],
  patch: ['core', 'config', 'workspace'],
  git: ['core', 'config', 'process', 'workspace'],
  tools: ['core', 'config', 'policy', 'process', 'workspace', 'patch', 'git'],
  protocol: ['core', 'config', 'policy', 'tools'],
  auth: ['core', 'config'],
  http: ['core', 'config', 'auth', 'protocol'],
  stdio: ['core', 'config', 'protocol'],
  oauth: ['core', 'config', 'state', 'auth', 'http'],
  runtime: ['core', 'config', 'policy', 'process', 'state', 'workspace', 'patch', 'git', 'tools'],
  console: ['core', 'config', 'policy', 'patch', 'git', 'http'],
};

const layerRules = Object.entries(LAYERS).map(([layer, allowed]) => ({
  name: `layer-${layer}`,
  comment: `src/${layer}/ may import only ${allowed.length ? allowed.join(', ') : 'itself'} (docs/architecture.md)`,
  severity: 'error',
  from: { path: `^src/${layer}/` },
  to: { path: '^src/', pathNot: `^src/(${[layer, ...allowed].join('|')})/` },
}));

module.exports = {
  forbidden: [
    ...layerRules,
    {
      name: 'no-circular',
      comment: 'no file may take part in an import cycle (type imports included)',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    exclude: { path: '(^|/)node_modules/' },
  },
};
