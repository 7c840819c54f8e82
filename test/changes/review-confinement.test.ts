// Review points' confinement with the server as root, in bubblewrap (suite: review-confinement-suite.ts).
import { reviewSuite } from './review-confinement-suite.js';

reviewSuite('root');
