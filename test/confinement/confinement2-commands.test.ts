// The second round of command-sandbox attacks with the server started as root (CI runs as root): commands
// against the helper and each other (confinement2-isolation-suite.ts) and what a command may leave behind
// (confinement2-plant-suite.ts). confinement2-commands-unprivileged.test.ts runs the same suites as nobody.
import { isolationSuite } from './confinement2-isolation-suite.js';
import { plantSuite } from './confinement2-plant-suite.js';

isolationSuite('root');
plantSuite('root');
