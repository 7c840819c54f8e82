// The git attacks of confinement2-git-suite.ts against the Landlock jail in a simulated container, with the
// server as an unprivileged user (setpriv → nobody); confinement3-landlock-git.test.ts runs them as root.
import { gitSuite } from './confinement2-git-suite.js';
import { LANDLOCK_SIM } from '../helpers/container-sim.js';

gitSuite('nobody', LANDLOCK_SIM);
