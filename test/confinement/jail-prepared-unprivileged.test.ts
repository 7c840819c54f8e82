// Tool jails prepared ahead (jail-prepared-suite.ts) with the server as nobody (uid 65534): in bubblewrap, and in
// a simulated container where bubblewrap cannot start (the Landlock jail).
import { preparedJailSuite } from './jail-prepared-suite.js';
import { LANDLOCK_SIM } from '../helpers/container-sim.js';

preparedJailSuite('nobody');
preparedJailSuite('nobody', LANDLOCK_SIM);
