// The second round of command-sandbox attacks with the server started as an unprivileged user (setpriv →
// nobody, owning its workspace and runtime root). The suites are in confinement2-isolation-suite.ts and
// confinement2-plant-suite.ts; confinement2-commands.test.ts runs them as root.
import { isolationSuite } from './confinement2-isolation-suite.js';
import { plantSuite } from './confinement2-plant-suite.js';

isolationSuite('nobody');
plantSuite('nobody');
