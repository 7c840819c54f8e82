// The proxy decides by numbers, never by spelling, server as root (test/net/net-spelling-suite.ts).
import { spellingSuite } from './net-spelling-suite.js';

spellingSuite('root');
