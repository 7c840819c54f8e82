// The command-sandbox attacks against the Landlock sandbox in a simulated container (bubblewrap cannot start
// there), with the server as root (CI runs as root): test/confinement/confinement3-landlock-suite.ts, and the isolation
// and plant suites of the second round with the same servers' setup. The unprivileged run is
// confinement3-landlock-unprivileged.test.ts.
import { isolationSuite } from './confinement2-isolation-suite.js';
import { plantSuite } from './confinement2-plant-suite.js';
import { landlockSuite } from './confinement3-landlock-suite.js';
import { LANDLOCK_SIM } from '../helpers/container-sim.js';

landlockSuite('root');
isolationSuite('root', LANDLOCK_SIM);
plantSuite('root', LANDLOCK_SIM);
