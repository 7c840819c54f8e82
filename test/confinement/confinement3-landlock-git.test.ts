// The git attacks of confinement2-git-suite.ts against the Landlock jail (src/process/jail/jail-landlock.ts), in a
// simulated container where bubblewrap cannot start, with the server as root (CI runs as root);
// confinement3-landlock-git-unprivileged.test.ts runs them as nobody.
import { gitSuite } from './confinement2-git-suite.js';
import { LANDLOCK_SIM } from '../helpers/container-sim.js';

gitSuite('root', LANDLOCK_SIM);
