// `trusted`'s own network namespace and grants that end with their command, with the server as an
// unprivileged user (setpriv → nobody; test/net/net-trusted-suite.ts).
import { trustedNetSuite } from './net-trusted-suite.js';

trustedNetSuite('nobody');
