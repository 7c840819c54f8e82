// The console's Workspaces section with the server as uid 65534, in bubblewrap
// (test/console/console-workspaces-suite.ts).
import { consoleWorkspacesSuite } from './console-workspaces-suite.js';

consoleWorkspacesSuite('nobody');
