// The network fails closed, at any runtime root, and is shared fairly, with the server as an unprivileged user
// (setpriv → nobody; test/net/net-failclosed-suite.ts).
import { failClosedSuite } from './net-failclosed-suite.js';

failClosedSuite('nobody');
