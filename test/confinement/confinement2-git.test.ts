// git and repository-controlled programs, with the server started as root (CI runs as root); the suite is in
// confinement2-git-suite.ts, and confinement2-git-unprivileged.test.ts runs it as nobody.
import { gitSuite } from './confinement2-git-suite.js';

gitSuite('root');
