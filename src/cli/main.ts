#!/usr/bin/env -S node --max-semi-space-size=1 --heap-growing-percent=30
// The bin. The shebang gives node the server's heap flags; started any other way (`node dist/cli/main.js`, a
// process manager), the bin first makes sure they are in force (heap-flags.ts) and only then loads the server
// (serve.ts), so a process that only hands over to its relaunched self loads nothing else. The server's code
// is compiled to V8's baseline tier from the start (process/compile-tier.ts).
import { compileToBaseline } from '../process/compile-tier.js';
import { relaunchWithHeapFlags } from './heap-flags.js';

if (relaunchWithHeapFlags()) {
  compileToBaseline();
  await import('./serve.js');
}
