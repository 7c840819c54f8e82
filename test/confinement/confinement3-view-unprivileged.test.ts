// What a command sees of the host (test/confinement/confinement3-view-suite.ts) with the server as nobody
// (uid 65534), in bubblewrap and in the Landlock sandbox of a simulated container.
import { LANDLOCK_SIM } from '../helpers/container-sim.js';
import { viewSuite } from './confinement3-view-suite.js';

viewSuite('nobody');
viewSuite('nobody', LANDLOCK_SIM);
