// The Landlock sandbox attacks in a simulated container with the server as an unprivileged user (setpriv →
// nobody, owning its workspace and runtime root); confinement3-landlock.test.ts runs them as root.
import { isolationSuite } from './confinement2-isolation-suite.js';
import { plantSuite } from './confinement2-plant-suite.js';
import { landlockSuite } from './confinement3-landlock-suite.js';
import { LANDLOCK_SIM } from '../helpers/container-sim.js';

landlockSuite('nobody');
isolationSuite('nobody', LANDLOCK_SIM);
plantSuite('nobody', LANDLOCK_SIM);
