// Several workspaces in the Landlock sandbox of a simulated container, the server as root and as nobody
// (test/workspaces/workspaces-suite.ts, test/helpers/container-sim.ts).
import { LANDLOCK_SIM } from '../helpers/container-sim.js';
import { workspacesSuite } from './workspaces-suite.js';

workspacesSuite('root', LANDLOCK_SIM);
workspacesSuite('nobody', LANDLOCK_SIM);
