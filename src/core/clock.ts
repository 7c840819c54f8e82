// Time is injected everywhere it decides something (expiry, TTLs, timeouts, retention), so tests can move it
// without sleeping. `now()` is wall-clock milliseconds; `monotonic()` never goes backwards (for durations).

export interface Clock {
  now(): number;
  monotonic(): number;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  monotonic: () => performance.now(),
};

/** A clock a test moves by hand. */
export class ManualClock implements Clock {
  constructor(
    private wall = 1_700_000_000_000,
    private mono = 0,
  ) {}
  now(): number {
    return this.wall;
  }
  monotonic(): number {
    return this.mono;
  }
  advance(ms: number): void {
    this.wall += ms;
    this.mono += ms;
  }
}
