// Whether a native program (native/*.c, src/process/native.ts) was built, for tests that need it: skipped with the
// reason where it was not (no C compiler), a failure under CI=true, where .ci/run always builds it.
import { builtProgram } from '../../src/process/native.js';

export function needBuilt(names: readonly string[], what: string): boolean {
  const missing = names.filter((n) => !builtProgram(n));
  if (missing.length === 0) return true;
  const why = `dist/native/${missing.join(', dist/native/')} was not built (npm run build needs a C compiler)`;
  if (process.env.CI === 'true') throw new Error(`${what} under CI=true, but ${why}`);
  console.log(`SKIP ${what}: ${why}`);
  return false;
}
