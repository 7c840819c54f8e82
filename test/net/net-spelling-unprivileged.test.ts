// The proxy decides by numbers, never by spelling, with the server as an unprivileged user (setpriv → nobody;
// test/net/net-spelling-suite.ts).
import { spellingSuite } from './net-spelling-suite.js';

spellingSuite('nobody');
