// git and repository-controlled programs, with the server started as nobody (setpriv; the repository and
// the marker file are nobody's). The suite is in confinement2-git-suite.ts.
import { gitSuite } from './confinement2-git-suite.js';

gitSuite('nobody');
