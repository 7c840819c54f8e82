// `trusted`'s own network namespace and grants that end with their command, server as root
// (test/net/net-trusted-suite.ts).
import { trustedNetSuite } from './net-trusted-suite.js';

trustedNetSuite('root');
