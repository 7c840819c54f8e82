// The console's Workspaces section with the server as root, in bubblewrap (test/console/console-workspaces-suite.ts).
import { consoleWorkspacesSuite } from './console-workspaces-suite.js';

consoleWorkspacesSuite('root');
