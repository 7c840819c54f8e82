// Review points' confinement with the server as nobody (setpriv), in bubblewrap and in the Landlock jail of a
// simulated container (suite: review-confinement-suite.ts).
import { reviewSuite } from './review-confinement-suite.js';
import { LANDLOCK_SIM } from '../helpers/container-sim.js';

reviewSuite('nobody');
reviewSuite('nobody', LANDLOCK_SIM);
