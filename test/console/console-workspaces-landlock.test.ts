// The console's Workspaces section (Merge, Discard, the hostile clone) in the Landlock sandbox of a simulated
// container, the server as root and as nobody (test/console/console-workspaces-suite.ts,
// test/helpers/container-sim.ts).
import { LANDLOCK_SIM } from '../helpers/container-sim.js';
import { consoleWorkspacesSuite } from './console-workspaces-suite.js';

consoleWorkspacesSuite('root', LANDLOCK_SIM);
consoleWorkspacesSuite('nobody', LANDLOCK_SIM);
