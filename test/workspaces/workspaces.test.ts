// Several workspaces with the server as root, in bubblewrap (test/workspaces/workspaces-suite.ts).
import { workspacesSuite } from './workspaces-suite.js';

workspacesSuite('root');
