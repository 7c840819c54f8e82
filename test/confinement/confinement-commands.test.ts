// Command side: the sandbox attacks with the server started as root (CI runs as root). The suite
// itself is in confinement-commands-suite.ts; confinement-commands-unprivileged.test.ts runs it as nobody.
import { commandConfinementSuite } from './confinement-commands-suite.js';

commandConfinementSuite('root');
