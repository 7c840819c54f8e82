/* global module */
// The layers of docs/architecture.md, enforced by `npm run lint` (dependency-cruiser): each folder of src/ may
// import only the folders below it, each room of process/ and oauth/ only the rooms below it, and no file may
// take part in an import cycle, type imports included.
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
  workspaces: ['core', 'config', 'policy', 'process', 'state', 'workspace', 'patch', 'git', 'tools'],
  runtime: [
    'core',
    'config',
    'policy',
    'process',
    'state',
    'workspace',
    'patch',
    'git',
    'tools',
    'workspaces',
  ],
  console: ['core', 'config', 'policy', 'patch', 'git', 'http'],
};

/** Rooms inside a layer (docs/architecture.md#the-rooms-of-process-and-oauth): each may import the rooms listed, the
 * layer's own top-level files and the layers below, and nothing else of its layer. */
const ROOMS = {
  'process/spawn': [],
  'process/sandbox': ['process/spawn'],
  'process/jail': ['process/sandbox', 'process/spawn'],
  'process/net': ['process/sandbox'],
  'process/spawner': ['process/spawn', 'process/sandbox', 'process/net'],
  'process/commands': ['process/spawn', 'process/sandbox', 'process/net', 'process/spawner', 'process/jail'],
  'oauth/grants': [],
  'oauth/checks': ['oauth/grants'],
  'oauth/clients': ['oauth/checks'],
  'oauth/endpoints': ['oauth/clients', 'oauth/grants', 'oauth/checks'],
};

/** Top-level files of a layer that its rooms build on: they import no room. */
const SHARED = {
  process: ['inherited-fds', 'native', 'runtime-dir', 'stat-batch', 'supervised'],
  oauth: ['clients', 'errors', 'html', 'http-io', 'secrets'],
};
/** Top-level files that assemble a layer's rooms: no room imports them. */
const ASSEMBLY = { oauth: ['server', 'from-config'] };

const inLayer = (layer, names) => `^src/${layer}/(${names.join('|')})\\.ts$`;
const roomRules = [
  ...Object.entries(ROOMS).map(([room, allowed]) => {
    const layer = room.split('/')[0];
    return {
      name: `room-${room.replace('/', '-')}`,
      comment: `src/${room}/ may import ${[...allowed, `the top-level files of src/${layer}/`].join(', ')} and the layers below (docs/architecture.md)`,
      severity: 'error',
      from: { path: `^src/${room}/` },
      to: { path: `^src/${layer}/[^/]+/`, pathNot: `^src/(${[room, ...allowed].join('|')})/` },
    };
  }),
  ...Object.entries(SHARED).map(([layer, names]) => ({
    name: `room-${layer}-shared`,
    comment: `the shared top-level files of src/${layer}/ import none of its rooms (docs/architecture.md)`,
    severity: 'error',
    from: { path: inLayer(layer, names) },
    to: { path: `^src/${layer}/[^/]+/` },
  })),
  ...Object.entries(ASSEMBLY).map(([layer, names]) => ({
    name: `room-${layer}-assembly`,
    comment: `no room of src/${layer}/ imports what assembles them (docs/architecture.md)`,
    severity: 'error',
    from: { path: `^src/${layer}/[^/]+/` },
    to: { path: inLayer(layer, names) },
  })),
];

const layerRules = Object.entries(LAYERS).map(([layer, allowed]) => ({
  name: `layer-${layer}`,
  comment: `src/${layer}/ may import only ${allowed.length ? allowed.join(', ') : 'itself'} (docs/architecture.md)`,
  severity: 'error',
  from: { path: `^src/${layer}/` },
  to: { path: '^src/', pathNot: `^src/(${[layer, ...allowed].join('|')})/` },
}));

/** src/apps/ (src/apps/README.md): pages a client's host runs in a browser, apart from the server both ways. */
const appRules = [
  {
    name: 'apps-alone',
    comment: 'src/apps/ imports nothing else of src/ (src/apps/README.md)',
    severity: 'error',
    from: { path: '^src/apps/' },
    to: { path: '^src/', pathNot: '^src/apps/' },
  },
  {
    name: 'apps-packages',
    comment:
      'src/apps/ imports only @modelcontextprotocol/ext-apps and zod of the packages (src/apps/README.md)',
    severity: 'error',
    from: { path: '^src/apps/' },
    to: { path: 'node_modules/', pathNot: 'node_modules/(@modelcontextprotocol/ext-apps|zod)/' },
  },
  {
    name: 'apps-not-imported',
    comment: 'the server imports nothing of src/apps/: it serves the built page (src/apps/README.md)',
    severity: 'error',
    from: { path: '^src/', pathNot: '^src/apps/' },
    to: { path: '^src/apps/' },
  },
];

module.exports = {
  forbidden: [
    ...layerRules,
    ...roomRules,
    ...appRules,
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
