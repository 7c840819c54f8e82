// Review points' confinement with the server as root in the Landlock jail of a simulated container (suite:
// review-confinement-suite.ts).
import { reviewSuite } from './review-confinement-suite.js';
import { LANDLOCK_SIM } from '../helpers/container-sim.js';

reviewSuite('root', LANDLOCK_SIM);
