// Several workspaces with the server as nobody (uid 65534), in bubblewrap (test/workspaces/workspaces-suite.ts).
import { workspacesSuite } from './workspaces-suite.js';

workspacesSuite('nobody');
