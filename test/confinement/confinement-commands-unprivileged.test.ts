// Command side: the same sandbox attacks with the server started as an unprivileged user (setpriv →
// nobody, with a workspace and runtime root it owns), where no pids cgroup is writable and the watchdog bounds
// the fork storm instead.
import { commandConfinementSuite } from './confinement-commands-suite.js';

commandConfinementSuite('nobody');
