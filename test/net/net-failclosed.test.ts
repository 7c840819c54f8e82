// The network fails closed, at any runtime root, and is shared fairly, server as root
// (test/net/net-failclosed-suite.ts).
import { failClosedSuite } from './net-failclosed-suite.js';

failClosedSuite('root');
