// git/settle: how long a file must have stood still before what was read of it is cached, by the step of its
// file system's timestamps (told by the ctime's fraction of a second).
import { describe, expect, it } from 'vitest';
import { COARSE_STABLE_MS, FINE_STABLE_MS, stoodStill } from '../../src/git/settle.js';

const ns = (ms: number) => BigInt(Math.round(ms * 1000)) * 1000n;
const at = (mtimeMs: number, ctimeMs: number) => ({ mtimeNs: ns(mtimeMs), ctimeNs: ns(ctimeMs) });
const NOW = 1_800_000_000_000;

describe('stoodStill', () => {
  it('waits a kernel tick’s margin where timestamps carry fractions of a second', () => {
    const t = NOW - FINE_STABLE_MS - 1.5;
    expect(stoodStill(at(t, t), NOW)).toBe(true);
    expect(stoodStill(at(t, NOW - 3.5), NOW), 'ctime too recent').toBe(false);
    expect(stoodStill(at(NOW - 3.5, t), NOW), 'mtime too recent').toBe(false);
    expect(stoodStill(at(NOW + 60_000.5, t), NOW), 'mtime ahead of the clock').toBe(false);
  });

  it('waits two seconds where the ctime falls on a whole second (a coarse file system)', () => {
    const whole = Math.floor((NOW - FINE_STABLE_MS - 500) / 1000) * 1000;
    expect(NOW - whole).toBeLessThan(COARSE_STABLE_MS);
    expect(stoodStill(at(whole, whole), NOW)).toBe(false);
    const older = Math.floor((NOW - COARSE_STABLE_MS - 1000) / 1000) * 1000;
    expect(stoodStill(at(older, older), NOW)).toBe(true);
  });
});
