// Tool jails prepared ahead (jail-prepared-suite.ts) with the server as root: in bubblewrap, and in a simulated
// container where bubblewrap cannot start (the Landlock jail); jail-prepared-unprivileged.test.ts runs them as
// nobody.
import { preparedJailSuite } from './jail-prepared-suite.js';
import { LANDLOCK_SIM } from '../helpers/container-sim.js';

preparedJailSuite('root');
preparedJailSuite('root', LANDLOCK_SIM);
