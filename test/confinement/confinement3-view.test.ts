// What a command sees of the host (test/confinement/confinement3-view-suite.ts) with the server as root, in
// bubblewrap and in the Landlock sandbox of a simulated container; confinement3-view-unprivileged.test.ts runs
// them as nobody.
import { LANDLOCK_SIM } from '../helpers/container-sim.js';
import { viewSuite } from './confinement3-view-suite.js';

viewSuite('root');
viewSuite('root', LANDLOCK_SIM);
